// TimelineDownsampler (timeline_downsample.h): a bounded top-N of the spans
// by duration, and busy cells for the rest.
#include "analysis/timeline_downsample.h"

#include <algorithm>
#include <tuple>

namespace atrace::analysis {

namespace {
constexpr uint32_t kMaxCellDepth = (1u << 12) - 1;
constexpr uint32_t kMaxBuckets = 1u << 20;

uint64_t cell_key(const SpanRow& r, uint32_t bucket) {
  uint64_t k = r.thread;
  k = (k << 2) | static_cast<uint64_t>(r.kind);
  k = (k << 12) | std::min(r.depth, kMaxCellDepth);
  return (k << 20) | bucket;
}

auto row_order(const SpanRow& r) { return std::make_tuple(r.thread, r.kind, r.depth); }
}  // namespace

bool TimelineDownsampler::DropFirst::operator()(const Candidate& a, const Candidate& b) const {
  // priority_queue puts the largest on top: "largest" is the first to drop.
  // Start and thread only make the choice the same on every run.
  return std::make_tuple(b.dur, a.row.depth, a.start, a.row.thread) <
         std::make_tuple(a.dur, b.row.depth, b.start, b.row.thread);
}

TimelineDownsampler::TimelineDownsampler(TraceNames& names, const DownsampleOptions& opt)
    : names_(names), opt_(opt) {
  opt_.buckets = std::clamp<uint32_t>(opt_.buckets, 1, kMaxBuckets);
  if (opt_.t1 < opt_.t0) opt_.t1 = opt_.t0;
  uint64_t range = opt_.t1 - opt_.t0;
  bucket_ns_ = std::max<uint64_t>(1, (range + opt_.buckets - 1) / opt_.buckets);
  buckets_ = opt_.buckets;
}

TimelineDownsampler::ThreadState& TimelineDownsampler::thread(uint32_t pid, uint32_t tid) {
  auto [it, fresh] = by_tid_.try_emplace(tid);
  if (fresh) {
    it->second.index = static_cast<uint32_t>(threads_.size());
    threads_.push_back(TimelineThread{tid, pid});
  }
  return it->second;
}

uint64_t TimelineDownsampler::name_key(const Span& s) {
  switch (s.kind) {
    case SpanKind::Function: return s.id;
    case SpanKind::Syscall: return (uint64_t{1} << 40) + (s.nr & 0xffffffffff);
    case SpanKind::OffCpu: break;
  }
  return (uint64_t{2} << 40) + (s.blocked() ? 1 : 0);
}

void TimelineDownsampler::begin(uint32_t pid, uint32_t tid, const Span& s) {
  ThreadState& t = thread(pid, tid);
  TimelineThread& info = threads_[t.index];
  switch (s.kind) {
    case SpanKind::Function:
      ++t.open_calls;
      info.depth = std::max(info.depth, t.open_calls);
      break;
    case SpanKind::Syscall: info.syscalls = true; break;
    case SpanKind::OffCpu: info.offcpu = true; break;
  }
}

void TimelineDownsampler::end(uint32_t pid, uint32_t tid, const Span& s, const SpanClose& c) {
  ThreadState& t = thread(pid, tid);
  Candidate cand{};
  cand.row = SpanRow{t.index, s.kind, 0};
  if (s.kind == SpanKind::Function) {
    // Spans end innermost first: the calls still open are this one's callers.
    if (t.open_calls) --t.open_calls;
    cand.row.depth = t.open_calls;
  }
  cand.start = s.start;
  cand.dur = c.ts - s.start;  // Timeline: never negative
  cand.name_key = name_key(s);
  cand.how = c.how;
  if (s.args) cand.values = *s.args;
  if (c.values) cand.values.insert(cand.values.end(), c.values->begin(), c.values->end());
  ++total_;
  name_spans_.try_emplace(cand.name_key, s);
  if (opt_.max_spans == 0) {
    drop(cand);
    return;
  }
  kept_.push(std::move(cand));
  if (kept_.size() > opt_.max_spans) {
    drop(kept_.top());
    kept_.pop();
  }
}

// Spreads the span's time over the buckets it overlaps; its count goes to
// the bucket it started in.
void TimelineDownsampler::drop(const Candidate& c) {
  ++dropped_;
  const uint64_t last = buckets_ - 1;
  uint64_t start = std::clamp(c.start, opt_.t0, opt_.t1);
  uint64_t end = std::clamp(c.start + c.dur, start, opt_.t1);
  uint64_t first_b = std::min((start - opt_.t0) / bucket_ns_, last);
  uint64_t last_b = end > start ? std::min((end - 1 - opt_.t0) / bucket_ns_, last) : first_b;
  for (uint64_t b = first_b; b <= last_b; ++b) {
    uint64_t lo = std::max(start, opt_.t0 + b * bucket_ns_);
    uint64_t hi = b == last ? end : std::min(end, opt_.t0 + (b + 1) * bucket_ns_);
    auto bucket = static_cast<uint32_t>(b);
    auto [it, fresh] = cells_.try_emplace(cell_key(c.row, bucket));
    BusyCell& cell = it->second;
    if (fresh) {
      cell.row = c.row;
      cell.row.depth = std::min(c.row.depth, kMaxCellDepth);
      cell.bucket = bucket;
    }
    cell.busy_ns += hi > lo ? hi - lo : 0;
    if (b == first_b) ++cell.spans;
  }
  if (cells_.size() > opt_.max_cells && buckets_ > 1) widen_buckets();
}

// Twice as wide: bucket b goes into b / 2 (the last into the new last), so
// the busy time and counts stay exact, only coarser.
void TimelineDownsampler::widen_buckets() {
  while (cells_.size() > opt_.max_cells && buckets_ > 1) {
    bucket_ns_ *= 2;
    buckets_ = (buckets_ + 1) / 2;
    std::unordered_map<uint64_t, BusyCell> wider;
    wider.reserve(cells_.size() / 2 + 1);
    for (const auto& [key, cell] : cells_) {
      uint32_t b = cell.bucket / 2;
      auto [it, fresh] = wider.try_emplace(cell_key(cell.row, b), cell);
      if (fresh) {
        it->second.bucket = b;
      } else {
        it->second.busy_ns += cell.busy_ns;
        it->second.spans += cell.spans;
      }
    }
    cells_ = std::move(wider);
  }
}

DownsampledTimeline TimelineDownsampler::finish() {
  DownsampledTimeline out;
  out.t0 = opt_.t0;
  out.t1 = opt_.t1;
  out.bucket_ns = bucket_ns_;
  out.total_spans = total_;
  out.dropped_spans = dropped_;
  if (dropped_ && !kept_.empty()) out.dropped_below_ns = kept_.top().dur;

  // Threads by process, then tid (the main thread first): indices were
  // given in order of appearance.
  std::vector<uint32_t> order(threads_.size()), index(threads_.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return std::make_pair(threads_[a].pid, threads_[a].tid) <
           std::make_pair(threads_[b].pid, threads_[b].tid);
  });
  for (uint32_t i = 0; i < order.size(); ++i) {
    index[order[i]] = i;
    out.threads.push_back(threads_[order[i]]);
  }

  std::unordered_map<uint64_t, uint32_t> name_index;
  out.spans.reserve(kept_.size());
  while (!kept_.empty()) {
    const Candidate& c = kept_.top();
    auto [it, fresh] = name_index.try_emplace(c.name_key, static_cast<uint32_t>(out.names.size()));
    if (fresh) out.names.push_back(names_.span(name_spans_.at(c.name_key)));
    SpanRow row = c.row;
    row.thread = index[row.thread];
    out.spans.push_back(KeptSpan{row, c.start, c.dur, it->second, c.how, c.values});
    kept_.pop();
  }
  std::sort(out.spans.begin(), out.spans.end(), [](const KeptSpan& a, const KeptSpan& b) {
    return std::make_tuple(row_order(a.row), a.start, a.dur) <
           std::make_tuple(row_order(b.row), b.start, b.dur);
  });
  out.cells.reserve(cells_.size());
  for (const auto& [key, cell] : cells_) {
    out.cells.push_back(cell);
    out.cells.back().row.thread = index[cell.row.thread];
  }
  std::sort(out.cells.begin(), out.cells.end(), [](const BusyCell& a, const BusyCell& b) {
    return std::make_tuple(row_order(a.row), a.bucket) <
           std::make_tuple(row_order(b.row), b.bucket);
  });
  return out;
}

}  // namespace atrace::analysis
