// The fast path's records carry the TSC (rdtscp in the trampolines: no
// system call); atrace's BPF events carry bpf_ktime_get_ns(), i.e.
// CLOCK_MONOTONIC. This converts the first to the second so that both merge
// on one time line (docs/fast-path.md, "Reading the records").
//
// The map is piecewise linear between anchors, each a pair of readings
// taken side by side: rdtsc, clock_gettime(CLOCK_MONOTONIC), rdtsc, the
// tightest of several tries (the clock read happened somewhere inside the
// bracket, so half its width is the pair's own error). An anchor is taken at
// the start and one at each refresh during the recording (the ring reader's
// drains: refresh() after reading the ring and before converting what it
// read, so that every record falls between two anchors). So the map follows
// CLOCK_MONOTONIC's NTP slewing segment by segment instead of extrapolating
// a rate measured at the start, and a segment, once its end anchor is in,
// never changes: a time stamp converts the same at every drain, and two of
// one thread keep their order. Anchors older than `keep_ns` before the
// newest are dropped (a time stamp before the oldest kept is extrapolated
// from the first segment: only a record that arrived that late), unless
// records still to be read need them: hold() names the oldest time stamp
// still to come (a backlog read in batches after the process exited can
// take longer than `keep_ns` on a loaded machine; converted with anchors
// dropped in between, one thread's records came out of order and a call
// read as an exit without its entry), and the window counts from there.
//
// Only on a TSC that ticks at one rate on every CPU, idle or not
// (/proc/cpuinfo's constant_tsc and nonstop_tsc): tsc_refusal() says why
// not otherwise.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>

namespace atrace::fastpath {

// Why the TSC cannot be this machine's clock for the fast path ("" when it
// can): `cpuinfo` is /proc/cpuinfo's text; the second form reads it.
std::string tsc_refusal(std::string_view cpuinfo);
std::string tsc_refusal();

// One anchor: CLOCK_MONOTONIC `ns` read between the TSC readings `before`
// and `after`.
struct ClockPair {
  uint64_t before = 0;
  uint64_t ns = 0;
  uint64_t after = 0;
};

// The TSC, ordered against the instructions around it (lfence on both
// sides), as the trampolines' rdtscp is.
uint64_t read_tsc();

// The pair of narrowest bracket among `tries` taken in a row.
ClockPair read_pair(int tries = 16);

// How far a converted time stamp can be from CLOCK_MONOTONIC's.
struct ConversionError {
  uint64_t bracket_ns = 0;   // the widest anchor's bracket, in ns (half of it: its error)
  uint64_t residual_ns = 0;  // the largest distance of a new pair from the map extrapolated to it
  uint64_t checked = 0;      // pairs measured against the map
};

class TscClock {
 public:
  explicit TscClock(uint64_t keep_ns = 2'000'000'000) : keep_ns_(keep_ns) {}

  // Measures `p` against the map as it is (once it has two anchors: the
  // residual of extrapolating the last segment to it), then adds it as the
  // newest anchor. A pair that does not go forward in both clocks is
  // ignored.
  void add(const ClockPair& p);
  // add(read_pair()).
  void refresh();

  // Two anchors: to_ns() works.
  bool ready() const { return anchors_.size() >= 2; }
  // CLOCK_MONOTONIC ns of a TSC reading: monotonic in `tsc`, exact at the
  // anchors (their bracket's middle). 0 until ready().
  uint64_t to_ns(uint64_t tsc) const;
  // The oldest time stamp still to be converted (the ring reader's
  // complete_until()): no anchor within `keep_ns` before it is dropped.
  // UINT64_MAX, the default: none, the window counts from the newest.
  void hold(uint64_t tsc) { hold_tsc_ = tsc; }
  // TSC ticks in `ns` nanoseconds, at the last segment's rate (the ring
  // reader's wait). 0 until ready().
  uint64_t ticks(uint64_t ns) const;

  ConversionError error() const;
  size_t anchors() const { return anchors_.size(); }

 private:
  struct Anchor {
    uint64_t tsc2;  // before + after: twice the bracket's middle, exactly
    uint64_t ns;
  };
  void forget_old();

  uint64_t keep_ns_;
  uint64_t hold_tsc_ = UINT64_MAX;
  std::deque<Anchor> anchors_;
  uint64_t widest_ = 0;  // the widest bracket kept, in ticks
  ConversionError error_;
};

}  // namespace atrace::fastpath
