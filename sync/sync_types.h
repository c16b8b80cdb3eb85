// The data of clock synchronisation, before any algorithm: what each host
// recorded (clock snapshots, one-way messages) and what the algorithms
// answer (a correction per host, a report per host pair). Pure values, no
// I/O: the trace reader fills the input, `atrace merge` stores the output.
//
// Times are int64 ns on one host's CLOCK_MONOTONIC ("local") unless named
// otherwise; the reference time line is the reference host's MONOTONIC.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace atrace::sync {

// A host is its index in SyncInput::hosts (a recording of one boot).
using HostIndex = uint32_t;

inline constexpr int64_t kUnbounded = std::numeric_limits<int64_t>::max();

// Bounds add along paths; an unbounded one stays unbounded.
inline int64_t add_bounds(int64_t x, int64_t y) {
  return (x >= kUnbounded - y) ? kUnbounded : x + y;
}

// One message from one host to another: when it left (sender's clock) and
// when it arrived (receiver's clock). Its delay is unknown but positive,
// which is all the convex hull method assumes.
struct MessageSample {
  int64_t send_ns = 0;
  int64_t recv_ns = 0;
};

// Every message of one direction of a host pair.
struct DirectedMessages {
  HostIndex from = 0;
  HostIndex to = 0;
  std::vector<MessageSample> samples;
};

// MONOTONIC read just before and just after one REALTIME read: REALTIME
// was taken at some MONOTONIC time inside [mono_before, mono_after]. The
// kernel's own error estimate (adjtimex) says how far REALTIME may be from
// true UTC; unsynchronised means it does not know (STA_UNSYNC).
struct ClockSnapshot {
  int64_t mono_before_ns = 0;
  int64_t realtime_ns = 0;
  int64_t mono_after_ns = 0;
  int64_t maxerror_us = 0;
  int64_t esterror_us = 0;
  bool unsynchronised = false;

  int64_t mono_mid_ns() const { return mono_before_ns + (mono_after_ns - mono_before_ns) / 2; }
  int64_t bracket_ns() const { return mono_after_ns - mono_before_ns; }
};

// What one recording says about its clock.
struct HostClock {
  std::string name;                      // host name, for reports
  std::string boot_id;                   // equal boot ids share one MONOTONIC clock
  std::vector<ClockSnapshot> snapshots;  // in MONOTONIC order
};

// One piece of a piecewise-linear correction: for local times from
// start_ns to the next segment's start,
//   reference = local + offset_ns + drift_ppm * 1e-6 * (local - start_ns).
// The first segment also covers times before it, the last times after it.
// bound_ns: how far the corrected time may be from the truth there.
struct Segment {
  int64_t start_ns = 0;
  int64_t offset_ns = 0;
  double drift_ppm = 0;
  int64_t bound_ns = 0;
};

enum class Method { kMessages, kRealtime, kSameBoot, kNone };

// Trace Compass's meanings: ACCURATE, the messages bound the drift from
// both sides; APPROXIMATE, a usable estimate whose drift (or, from
// REALTIME, whose offset) is bounded only by an assumption; FAIL, the
// evidence contradicts a linear clock relation (or the kernel says its
// clock is unsynchronised), the estimate is a best effort.
enum class Quality { kAccurate, kApproximate, kFail };

const char* method_name(Method m);
const char* quality_name(Quality q);

// What the algorithms found for one host pair. offset_ns and drift_ppm
// map b's clock onto a's in the middle of the evidence:
//   a_time = b_time + offset_ns (drift_ppm: how much faster a runs).
struct PairReport {
  HostIndex a = 0;
  HostIndex b = 0;
  Method method = Method::kNone;
  size_t messages = 0;  // message samples the estimate used
  size_t windows = 0;   // windowed fits (kMessages), snapshots (kRealtime)
  int64_t offset_ns = 0;
  double drift_ppm = 0;
  int64_t bound_ns = kUnbounded;
  Quality quality = Quality::kFail;
  bool in_tree = false;          // an edge of the spanning tree
  int64_t loop_residual_ns = 0;  // not in the tree: direct minus composed
  bool loop_consistent = true;   // residual within the bounds of both ways
  size_t violations_before = 0;  // causal repair: receives too early, before
  size_t violations_after = 0;   // ... and after it
  int64_t largest_shift_ns = 0;  // largest repair shift on either host
};

// One host's correction to the reference time line.
struct HostCorrection {
  std::vector<Segment> segments;  // ascending start_ns, never empty
  HostIndex parent = 0;           // spanning tree (itself for the reference)
  bool connected = true;          // false: no evidence links it; identity
};

struct SyncOptions {
  HostIndex reference = 0;
  // Windowed fit: a new line per window of the pair's messages, because
  // NTP slews MONOTONIC (its rate changes every few minutes at most).
  int64_t window_ns = 10'000'000'000;
  // A window whose messages no line fits is halved down to this length.
  int64_t min_window_ns = 1'000'000'000;
  // The assumed bound of the relative rate of two clocks; only used where
  // the messages do not bound the drift themselves (APPROXIMATE).
  double max_drift_ppm = 1000;
  // How far the relative rate may stray inside a window from the drifts
  // its messages allow (NTP changing a rate mid-window bends the relation):
  // the stated bounds also hold for such a bent relation (windowed_fit.h).
  double max_rate_change_ppm = 20;
  // Estimate pairs of one boot anyway (to check the method against a
  // known truth) instead of taking offset 0.
  bool estimate_same_boot = false;
};

struct SyncInput {
  std::vector<HostClock> hosts;
  std::vector<DirectedMessages> messages;
  SyncOptions options;
};

struct SyncResult {
  std::vector<HostCorrection> hosts;  // one per SyncInput::hosts
  std::vector<PairReport> pairs;      // pairs with evidence or in the tree
};

}  // namespace atrace::sync
