// ProfileBuilder: rebuilds each thread's call stack from entry/exit events
// and folds every closed call into per-(thread, function) statistics; the
// all-threads rows are sums of those. The rules for imperfect traces
// (mismatched and orphan exits, unfinished calls, recursion) are in
// profile.h; they exist so a report never shows negative self times or
// totals longer than the recording.
#include "userspace/profile.h"

#include <algorithm>

#include "formats/trace_reader.h"

namespace atrace::analysis {

ProfileBuilder::ProfileBuilder(const std::vector<fmt::ProbeInfo>& probes) {
  for (const auto& p : probes) probes_[p.id] = p;
}

void ProfileBuilder::add(const fmt::Event& ev) {
  if (events_ == 0 || ev.ts < first_ts_) first_ts_ = ev.ts;
  last_ts_ = std::max(last_ts_, ev.ts);
  events_++;
  ThreadState& t = threads_[ev.tid];
  t.events++;
  t.pid = ev.pid;

  switch (ev.kind) {
    case fmt::EventKind::FuncEntry:
      t.stack.push_back(Frame{ev.id, ev.ts, 0});
      t.active[ev.id]++;
      break;
    case fmt::EventKind::FuncExit: {
      auto match = std::find_if(t.stack.rbegin(), t.stack.rend(),
                                [&](const Frame& f) { return f.id == ev.id; });
      if (match == t.stack.rend()) {
        orphan_exits_++;  // its entry happened before the recording started
        break;
      }
      // Frames above the match were left without their exit (longjmp,
      // exception): they end here too.
      size_t depth = t.stack.size() - static_cast<size_t>(match - t.stack.rbegin());
      while (t.stack.size() >= depth) close_frame(ev.tid, t, ev.ts, false);
      break;
    }
    case fmt::EventKind::ThreadExit:
      while (!t.stack.empty()) close_frame(ev.tid, t, ev.ts, true);
      break;
  }
}

// Pops the innermost frame of `t` and accounts it as ending at `ts`.
void ProfileBuilder::close_frame(uint32_t tid, ThreadState& t, uint64_t ts, bool unfinished) {
  Frame f = t.stack.back();
  t.stack.pop_back();
  uint64_t dur = ts > f.start ? ts - f.start : 0;

  FunctionStats& s = per_thread_[{tid, f.id}];
  if (s.calls == 0 || dur < s.min_ns) s.min_ns = dur;
  s.max_ns = std::max(s.max_ns, dur);
  s.calls++;
  if (unfinished) s.unfinished++;
  // Callee times can exceed ours only with inconsistent timestamps; clamp.
  s.self_ns += dur > f.child_ns ? dur - f.child_ns : 0;
  uint32_t& open = t.active[f.id];
  if (--open == 0) {
    s.total_ns += dur;  // outermost activation: inner ones are inside it
    t.active.erase(f.id);
  }
  if (!t.stack.empty()) t.stack.back().child_ns += dur;
}

namespace {

bool by_total(const FunctionStats& a, const FunctionStats& b) {
  if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
  return a.name < b.name;
}

}  // namespace

Profile ProfileBuilder::finish(uint64_t end_ts, const std::vector<fmt::ThreadInfo>& threads,
                               const fmt::LostCounts& lost) {
  uint64_t end = std::max(end_ts, last_ts_);
  for (auto& [tid, t] : threads_)
    while (!t.stack.empty()) close_frame(tid, t, end, true);

  Profile p;
  p.events = events_;
  p.orphan_exits = orphan_exits_;
  p.lost_events = lost.total();
  p.first_ts = first_ts_;
  p.last_ts = last_ts_;

  std::map<uint32_t, FunctionStats> merged;
  for (auto& [key, s] : per_thread_) {
    auto [tid, id] = key;
    s.id = id;
    s.tid = tid;
    auto probe = probes_.find(id);
    if (probe != probes_.end()) {
      s.name = probe->second.name;
      s.module = probe->second.module;
    } else {
      s.name = "<probe " + std::to_string(id) + ">";
    }
    p.per_thread.push_back(s);

    auto [it, fresh] = merged.try_emplace(id, s);
    if (fresh) {
      it->second.tid = 0;
      continue;
    }
    FunctionStats& m = it->second;
    m.calls += s.calls;
    m.unfinished += s.unfinished;
    m.total_ns += s.total_ns;
    m.self_ns += s.self_ns;
    m.min_ns = std::min(m.min_ns, s.min_ns);
    m.max_ns = std::max(m.max_ns, s.max_ns);
  }
  for (auto& [id, s] : merged) p.functions.push_back(std::move(s));
  std::sort(p.functions.begin(), p.functions.end(), by_total);
  std::stable_sort(p.per_thread.begin(), p.per_thread.end(),
                   [](const FunctionStats& a, const FunctionStats& b) {
                     if (a.tid != b.tid) return a.tid < b.tid;
                     return by_total(a, b);
                   });

  // Threads: the file's table (names) joined with what the events showed.
  std::map<uint32_t, ThreadSummary> summaries;
  for (const auto& ti : threads) {
    ThreadSummary& s = summaries[ti.tid];
    s.tid = ti.tid;
    s.pid = ti.pid;
    s.name = ti.name;
    s.events = ti.events;
  }
  for (const auto& [tid, t] : threads_) {
    ThreadSummary& s = summaries[tid];
    s.tid = tid;
    if (s.pid == 0) s.pid = t.pid;
    s.events = t.events;
  }
  for (auto& [tid, s] : summaries) p.threads.push_back(std::move(s));

  threads_.clear();
  per_thread_.clear();
  return p;
}

std::optional<SortKey> parse_sort_key(std::string_view s) {
  if (s == "calls") return SortKey::Calls;
  if (s == "total") return SortKey::Total;
  if (s == "self") return SortKey::Self;
  if (s == "avg") return SortKey::Avg;
  if (s == "max") return SortKey::Max;
  if (s == "name") return SortKey::Name;
  return std::nullopt;
}

void sort_functions(std::vector<FunctionStats>& rows, SortKey key) {
  auto value = [key](const FunctionStats& f) -> uint64_t {
    switch (key) {
      case SortKey::Calls: return f.calls;
      case SortKey::Total: return f.total_ns;
      case SortKey::Self: return f.self_ns;
      case SortKey::Avg: return f.avg_ns();
      case SortKey::Max: return f.max_ns;
      case SortKey::Name: break;
    }
    return 0;
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const FunctionStats& a, const FunctionStats& b) {
    uint64_t va = value(a), vb = value(b);
    if (va != vb) return va > vb;
    if (a.name != b.name) return a.name < b.name;
    return a.module < b.module;
  });
}

uint64_t recording_duration_ns(const fmt::TraceHeader& h, const Profile& p) {
  uint64_t start = h.start_mono_ns ? h.start_mono_ns : p.first_ts;
  uint64_t end = h.end_mono_ns ? h.end_mono_ns : p.last_ts;
  return end > start ? end - start : 0;
}

Profile build_profile(fmt::TraceReader& reader) {
  ProfileBuilder b(reader.probes());
  reader.rewind();
  fmt::Event ev;
  while (reader.next(ev)) b.add(ev);
  return b.finish(reader.header().end_mono_ns, reader.threads(), reader.lost());
}

}  // namespace atrace::analysis
