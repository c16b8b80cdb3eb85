// The timeline of `atrace report --html` (docs/report-html.md), cut down to
// what a page can hold: a TimelineSink (export_timeline.h) that keeps the
// longest spans, at most `max_spans` of them, and adds every other span's
// time to "busy" cells, one per thread, row and time bucket, so that the
// page still shows where short calls were and how much of the time they
// filled.
//
// Why the longest: a span shorter than a pixel at the full view is invisible
// until the reader zooms in, and the longest spans are the ones that shape
// the picture. It is also closed under nesting: a call is never shorter than
// the calls inside it, and among equal durations the outer call wins, so a
// kept call's callers are all kept; the page never shows a call floating
// without its parents.
//
// Memory: the kept spans (a bounded heap), the busy cells (bounded too:
// their buckets widen when there are too many), and the Timeline's open
// spans: bounded by the caps, the threads and the call depth, never by the
// trace's length.
#pragma once

#include <cstdint>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/export_timeline.h"

namespace atrace::analysis {

struct DownsampleOptions {
  size_t max_spans = 100000;  // kept spans, at most
  uint32_t buckets = 2000;    // busy cells per row across [t0, t1] (at most)
  // Busy cells in all, at most: past it, the buckets are made twice as
  // wide (neighbours merged) until they fit, or until each row has one.
  size_t max_cells = 200000;
  uint64_t t0 = 0, t1 = 0;  // the recording's time range (CLOCK_MONOTONIC ns)
};

// A row of the timeline: a thread's calls at one depth, its system calls,
// or its off-CPU periods.
struct SpanRow {
  uint32_t thread = 0;  // index into DownsampledTimeline::threads
  SpanKind kind = SpanKind::Function;
  uint32_t depth = 0;  // Function: 0 for the outermost calls
};

struct KeptSpan {
  SpanRow row;
  uint64_t start = 0;  // CLOCK_MONOTONIC ns
  uint64_t dur = 0;
  uint32_t name = 0;  // index into DownsampledTimeline::names
  SpanEnd how = SpanEnd::Closed;
  std::vector<formats::ProbeArg> values;  // Function: what record --args/--retval recorded
};

// Time of the spans left out, in one bucket of one row.
struct BusyCell {
  SpanRow row;
  uint32_t bucket = 0;   // [t0 + bucket * bucket_ns, + bucket_ns)
  uint64_t busy_ns = 0;  // inside the bucket only
  uint64_t spans = 0;    // spans that started in the bucket
};

struct TimelineThread {
  uint32_t tid = 0, pid = 0;
  uint32_t depth = 0;  // function rows: the deepest call seen + 1 (dropped ones too)
  bool syscalls = false, offcpu = false;  // has spans of that kind
};

struct DownsampledTimeline {
  uint64_t t0 = 0, t1 = 0;
  uint64_t bucket_ns = 1;               // the last bucket reaches t1
  std::vector<TimelineThread> threads;  // by pid, then tid
  std::vector<std::string> names;       // TraceNames::span() of the kept spans
  std::vector<KeptSpan> spans;          // by thread, kind, depth, start
  std::vector<BusyCell> cells;          // by thread, kind, depth, bucket
  uint64_t total_spans = 0;             // kept + dropped
  uint64_t dropped_spans = 0;
  // The shortest kept span when some were dropped: every dropped span is at
  // most this long (0: nothing dropped).
  uint64_t dropped_below_ns = 0;
};

class TimelineDownsampler : public TimelineSink {
 public:
  TimelineDownsampler(TraceNames& names, const DownsampleOptions& opt);
  void begin(uint32_t pid, uint32_t tid, const Span& s) override;
  void end(uint32_t pid, uint32_t tid, const Span& s, const SpanClose& c) override;
  // After Timeline::finish(). Call once.
  DownsampledTimeline finish();

 private:
  struct Candidate {
    SpanRow row;
    uint64_t start, dur;
    uint64_t name_key;  // see name_key()
    SpanEnd how;
    std::vector<formats::ProbeArg> values;
  };
  // Orders the heap: the span to drop first on top (shortest; among equal
  // durations the deepest, so that a caller outlives its callees).
  struct DropFirst {
    bool operator()(const Candidate& a, const Candidate& b) const;
  };
  struct ThreadState {
    uint32_t index = 0;
    uint32_t open_calls = 0;
  };
  ThreadState& thread(uint32_t pid, uint32_t tid);
  static uint64_t name_key(const Span& s);
  void drop(const Candidate& c);
  void widen_buckets();

  TraceNames& names_;
  DownsampleOptions opt_;
  uint64_t bucket_ns_ = 1;
  uint64_t buckets_ = 1;  // now: opt_.buckets, halved by each widening
  std::unordered_map<uint32_t, ThreadState> by_tid_;
  std::vector<TimelineThread> threads_;
  std::priority_queue<Candidate, std::vector<Candidate>, DropFirst> kept_;
  std::unordered_map<uint64_t, Span> name_spans_;  // name_key -> a span to name it by
  std::unordered_map<uint64_t, BusyCell> cells_;   // cell_key -> cell
  uint64_t total_ = 0, dropped_ = 0;
};

}  // namespace atrace::analysis
