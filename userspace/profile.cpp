// ProfileBuilder: rebuilds each thread's call stack from entry/exit events
// and folds every closed call into per-(thread, function) statistics; the
// all-threads rows are sums of those. The rules for imperfect traces
// (mismatched and orphan exits, unfinished calls, recursion) are in
// profile.h; they exist so a report never shows negative self times or
// totals longer than the recording.
#include "userspace/profile.h"

#include <algorithm>
#include <tuple>

#include "formats/trace_reader.h"
#include "userspace/syscall_names.h"

namespace atrace::analysis {

namespace {
// Ids above this go to a hash map: a damaged or hostile file must not make
// the dense table huge.
constexpr uint32_t kMaxDenseId = 1u << 20;
}  // namespace

ProfileBuilder::ProfileBuilder(const std::vector<fmt::ProbeInfo>& probes) {
  uint32_t max_id = 0;
  for (const auto& p : probes) {
    probes_[p.id] = p;
    if (p.id < kMaxDenseId) max_id = std::max(max_id, p.id);
  }
  dense_slot_.assign(static_cast<size_t>(max_id) + 1, 0);
}

uint32_t ProfileBuilder::slot_of(uint32_t id) {
  uint32_t* known = nullptr;
  if (id < dense_slot_.size()) {
    known = &dense_slot_[id];
    if (*known) return *known - 1;
  } else {
    auto it = sparse_slot_.find(id);
    if (it != sparse_slot_.end()) return it->second;
  }
  auto slot = static_cast<uint32_t>(slot_ids_.size());
  slot_ids_.push_back(id);
  if (known) *known = slot + 1;
  else sparse_slot_.emplace(id, slot);
  return slot;
}

ProfileBuilder::ThreadState& ProfileBuilder::thread(uint32_t tid) {
  // Events come in runs of one thread: remember the last one.
  if (last_thread_ && last_tid_ == tid) return *last_thread_;
  last_tid_ = tid;
  last_thread_ = &threads_[tid];  // node-based: the address stays valid
  return *last_thread_;
}

void ProfileBuilder::add(const fmt::Event& ev) {
  if (events_ == 0 || ev.ts < first_ts_) first_ts_ = ev.ts;
  last_ts_ = std::max(last_ts_, ev.ts);
  events_++;
  if (ev.kind == fmt::EventKind::Detach) {  // the recording's, not a thread's
    DetachedFunction d;
    d.id = ev.id;
    d.ts = ev.ts;
    d.reason = fmt::detach_reason(ev.flags);
    d.calls = ev.arg0;
    d.total_ns = ev.arg1;
    detached_.push_back(std::move(d));
    return;
  }
  ThreadState& t = thread(ev.tid);
  if (t.events++ == 0) t.first_ts = ev.ts;
  t.pid = ev.pid;
  if (ev.kind == fmt::EventKind::Usdt) {  // a point in time: no call, no kernel state
    count_probe(ev);
    return;
  }

  switch (ev.kind) {
    case fmt::EventKind::FuncEntry: {
      if (t.kernel.pending()) user_code(t, ev.ts);
      uint32_t slot = slot_of(ev.id);
      t.stack.push_back(Frame{slot, ev.ts, 0, t.kernel.totals()});
      if (slot >= t.active.size()) t.active.resize(slot + 1, 0);
      t.active[slot]++;
      break;
    }
    case fmt::EventKind::FuncExit: {
      if (t.kernel.pending()) user_code(t, ev.ts);
      uint32_t slot = slot_of(ev.id);
      auto match = std::find_if(t.stack.rbegin(), t.stack.rend(),
                                [&](const Frame& f) { return f.slot == slot; });
      if (match == t.stack.rend()) {
        orphan_exits_++;  // its entry happened before the recording started
        break;
      }
      // Frames above the match were left without their exit (longjmp,
      // exception): they end here too.
      size_t depth = t.stack.size() - static_cast<size_t>(match - t.stack.rbegin());
      while (t.stack.size() >= depth) close_frame(t, ev.ts, End::Returned);
      break;
    }
    case fmt::EventKind::Unwind: {
      if (t.kernel.pending()) user_code(t, ev.ts);
      uint32_t slot = slot_of(ev.id);
      auto match = std::find_if(t.stack.rbegin(), t.stack.rend(),
                                [&](const Frame& f) { return f.slot == slot; });
      if (match != t.stack.rend())
        close_frame_at(t, t.stack.size() - 1 - static_cast<size_t>(match - t.stack.rbegin()), ev.ts,
                       End::Unwound);
      break;
    }
    case fmt::EventKind::ThreadExit:
      // Its open system call first: exit() inside it belongs to the frames.
      {
        KernelTimes before = t.kernel.totals();
        count_syscall(t.kernel.exit(ev.ts));
        add_self_kernel(t, before);
      }
      while (!t.stack.empty()) close_frame(t, ev.ts, End::Unfinished);
      break;
    default:
      add_kernel(t, ev);
      break;
  }
}

// The kernel events: they move the thread's running totals, which frames
// read at entry and exit (kernel_attribution.h), and the self numbers of the
// innermost open call.
void ProfileBuilder::add_kernel(ThreadState& t, const fmt::Event& ev) {
  KernelTracker& k = t.kernel;
  t.has_kernel = true;
  KernelTimes before = k.totals();
  switch (ev.kind) {
    case fmt::EventKind::SchedSwitchOut: k.switch_out(ev.ts, ev.flags); break;
    case fmt::EventKind::SchedSwitchIn: k.switch_in(ev.ts); break;
    case fmt::EventKind::SyscallEnter: {
      uint32_t key = t.stack.empty() ? 0 : t.stack.back().slot + 1;
      count_syscall(k.syscall_enter(ev.ts, ev.arg0, key));
      break;
    }
    case fmt::EventKind::SyscallExit: count_syscall(k.syscall_exit(ev.ts, ev.arg0, ev.sarg1())); break;
    case fmt::EventKind::PageFault: k.fault(ev.ts); break;
    case fmt::EventKind::ProcExit: count_syscall(k.exit(ev.ts)); break;
    case fmt::EventKind::Comm: t.comm = ev.text; break;
    default: break;  // wake-ups, migrations, fork, exec: nothing to attribute
  }
  add_self_kernel(t, before);
}

// A function event found an interval open (its closing event was lost).
void ProfileBuilder::user_code(ThreadState& t, uint64_t ts) {
  KernelTimes before = t.kernel.totals();
  count_syscall(t.kernel.user_code(ts));
  add_self_kernel(t, before);
}

// What changed the totals since `before` happened entirely inside the
// innermost open call, not in a callee: no call enters or exits while an
// interval is open (kernel_attribution.h). So it is that call's self share,
// counted here rather than as inclusive minus callees at every exit: the
// function-event path stays as short as it was.
void ProfileBuilder::add_self_kernel(ThreadState& t, const KernelTimes& before) {
  if (t.stack.empty()) return;
  uint32_t slot = t.stack.back().slot;
  if (slot >= t.stats.size()) t.stats.resize(slot + 1);
  t.stats[slot].self_kernel += t.kernel.totals() - before;
}

// Takes frame `index` of `t` off its stack (the innermost one but for an
// unwound call) and accounts it as ending at `ts`; its time is its caller's
// child time.
void ProfileBuilder::close_frame_at(ThreadState& t, size_t index, uint64_t ts, End end) {
  Frame f = t.stack[index];
  t.stack.erase(t.stack.begin() + static_cast<std::ptrdiff_t>(index));
  uint64_t dur = ts > f.start ? ts - f.start : 0;
  Frame* caller = index > 0 ? &t.stack[index - 1] : nullptr;
  if (costs_.any()) dur = compensated(caller, f, dur);

  if (f.slot >= t.stats.size()) t.stats.resize(f.slot + 1);
  FunctionStats& s = t.stats[f.slot];
  if (s.calls == 0 || dur < s.min_ns) s.min_ns = dur;
  s.max_ns = std::max(s.max_ns, dur);
  s.calls++;
  if (end == End::Unfinished) s.unfinished++;
  if (end == End::Unwound) s.unwound++;
  // Callee times can exceed ours only with inconsistent timestamps; clamp.
  s.self_ns += dur > f.child_ns ? dur - f.child_ns : 0;
  if (--t.active[f.slot] == 0) {  // outermost activation only
    s.total_ns += dur;
    // No kernel interval is open here (kernel_attribution.h): the totals
    // are exact. Without kernel events they are all 0: skipped.
    if (t.has_kernel) s.kernel += t.kernel.totals() - f.kernel_at_entry;
  }
  if (caller) caller->child_ns += dur;
}

namespace {

// The name and module of a row, from the probe table.
void name_row_from(const std::map<uint32_t, fmt::ProbeInfo>& probes, FunctionStats& s) {
  auto probe = probes.find(s.id);
  if (probe != probes.end()) {
    s.name = probe->second.name;
    s.module = probe->second.module;
  } else {
    s.name = "<probe " + std::to_string(s.id) + ">";
  }
}

// Adds one thread's row to the all-threads row of the same function.
void merge_into(std::map<uint32_t, FunctionStats>& merged, const FunctionStats& s) {
  auto [it, fresh] = merged.try_emplace(s.id, s);
  FunctionStats& m = it->second;
  if (fresh) {
    m.tid = 0;
    return;
  }
  m.calls += s.calls;
  m.unfinished += s.unfinished;
  m.unwound += s.unwound;
  m.total_ns += s.total_ns;
  m.self_ns += s.self_ns;
  m.min_ns = std::min(m.min_ns, s.min_ns);
  m.max_ns = std::max(m.max_ns, s.max_ns);
  m.kernel += s.kernel;
  m.self_kernel += s.self_kernel;
}

bool by_total(const FunctionStats& a, const FunctionStats& b) {
  if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
  return a.name < b.name;
}

}  // namespace

Profile ProfileBuilder::finish(uint64_t end_ts, const std::vector<fmt::ThreadInfo>& threads,
                               const fmt::LostCounts& lost) {
  uint64_t end = std::max(end_ts, last_ts_);
  // Thread order, so the rows come out the same on every run.
  std::map<uint32_t, ThreadState*> ordered;
  for (auto& [tid, t] : threads_) ordered[tid] = &t;
  for (auto& [tid, t] : ordered) {
    KernelTimes before = t->kernel.totals();
    count_syscall(t->kernel.finish(end));
    add_self_kernel(*t, before);
    while (!t->stack.empty()) close_frame(*t, end, End::Unfinished);
  }

  Profile p;
  p.events = events_;
  p.orphan_exits = orphan_exits_;
  p.compensation = residual_;
  p.lost_events = lost.total();
  p.lost_known = !lost.per_cpu.empty();  // the footer always has one count a CPU
  p.first_ts = first_ts_;
  p.last_ts = last_ts_;

  std::map<uint32_t, FunctionStats> merged;
  for (auto& [tid, t] : ordered) {
    for (uint32_t slot = 0; slot < t->stats.size(); ++slot) {
      FunctionStats& s = t->stats[slot];
      if (s.calls == 0) continue;
      s.id = slot_ids_[slot];
      s.tid = tid;
      name_row_from(probes_, s);
      p.per_thread.push_back(s);
      merge_into(merged, s);
    }
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
  for (const auto& [tid, t] : ordered) {
    ThreadSummary& s = summaries[tid];
    s.tid = tid;
    if (s.pid == 0) s.pid = t->pid;
    if (s.name.empty()) s.name = t->comm;
    s.events = t->events;
    s.kernel = t->kernel.totals();
    uint64_t last = t->kernel.exited() ? t->kernel.exit_ts() : end;
    uint64_t span = last > t->first_ts ? last - t->first_ts : 0;
    s.oncpu_ns = span > s.kernel.offcpu_ns() ? span - s.kernel.offcpu_ns() : 0;
  }
  for (auto& [tid, s] : summaries) p.threads.push_back(std::move(s));

  p.syscalls = syscall_rows();
  mark_detached(p);
  p.probes = probe_rows();

  threads_.clear();
  last_thread_ = nullptr;
  return p;
}

void ProfileBuilder::count_probe(const fmt::Event& ev) {
  ProbeHits& h = probe_hits_[ev.id];
  h.count++;
  for (const auto& a : ev.args) {
    if (!a.is_string) continue;
    h.has_values = true;
    h.values[a.str]++;
    break;
  }
}

// Named from the probe table ("provider:name"), most hits first.
std::vector<ProbeHits> ProfileBuilder::probe_rows() {
  std::vector<ProbeHits> rows;
  for (auto& [id, h] : probe_hits_) {
    h.id = id;
    auto it = probes_.find(id);
    std::string full = it != probes_.end() ? it->second.name : "probe#" + std::to_string(id);
    if (it != probes_.end()) h.module = it->second.module;
    size_t colon = full.find(':');
    h.provider = colon == std::string::npos ? "" : full.substr(0, colon);
    h.name = colon == std::string::npos ? full : full.substr(colon + 1);
    rows.push_back(std::move(h));
  }
  probe_hits_.clear();
  std::stable_sort(rows.begin(), rows.end(), [](const ProbeHits& a, const ProbeHits& b) {
    if (a.count != b.count) return a.count > b.count;
    return std::tie(a.provider, a.name, a.module) < std::tie(b.provider, b.name, b.module);
  });
  return rows;
}

// Profile.detached, named, and the `detached` marks of the rows.
void ProfileBuilder::mark_detached(Profile& p) {
  std::stable_sort(detached_.begin(), detached_.end(),
                   [](const DetachedFunction& a, const DetachedFunction& b) { return a.ts < b.ts; });
  std::map<uint32_t, uint64_t> first;  // id -> its first decision
  for (auto& d : detached_) {
    FunctionStats named;
    named.id = d.id;
    name_row_from(probes_, named);
    d.name = std::move(named.name);
    d.module = std::move(named.module);
    first.try_emplace(d.id, d.ts);
  }
  for (auto* rows : {&p.functions, &p.per_thread})
    for (auto& f : *rows) {
      auto it = first.find(f.id);
      if (it == first.end()) continue;
      f.detached = true;
      f.detached_ns = it->second;
    }
  p.detached = std::move(detached_);
  detached_.clear();
}

// The --syscalls rows, named, largest total first.
std::vector<SyscallStats> ProfileBuilder::syscall_rows() const {
  std::vector<SyscallStats> rows;
  for (const auto& c : syscalls_.rows()) {
    SyscallStats r;
    if (c.key == 0) {
      r.function = kNoFunction;
    } else {
      FunctionStats named;
      named.id = slot_ids_[c.key - 1];
      name_row_from(probes_, named);
      r.function = std::move(named.name);
      r.module = std::move(named.module);
    }
    r.nr = c.nr;
    r.name = syscall_name(c.nr);
    r.count = c.count;
    r.total_ns = c.total_ns;
    r.max_ns = c.max_ns;
    r.errors = c.errors;
    rows.push_back(std::move(r));
  }
  std::sort(rows.begin(), rows.end(), [](const SyscallStats& a, const SyscallStats& b) {
    if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
    if (a.function != b.function) return a.function < b.function;
    return a.nr < b.nr;
  });
  return rows;
}

std::optional<SortKey> parse_sort_key(std::string_view s) {
  if (s == "calls") return SortKey::Calls;
  if (s == "total") return SortKey::Total;
  if (s == "self") return SortKey::Self;
  if (s == "avg") return SortKey::Avg;
  if (s == "max") return SortKey::Max;
  if (s == "name") return SortKey::Name;
  if (s == "offcpu") return SortKey::Offcpu;
  if (s == "systime") return SortKey::SysTime;
  if (s == "syscalls") return SortKey::Syscalls;
  if (s == "faults") return SortKey::Faults;
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
      case SortKey::Offcpu: return f.kernel.offcpu_ns();
      case SortKey::SysTime: return f.kernel.syscall_ns;
      case SortKey::Syscalls: return f.kernel.syscalls;
      case SortKey::Faults: return f.kernel.faults;
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

// --compensate, for frame `f` just popped from `t`: its duration without
// its probes and those of the calls nested in it (compensation.h), and its
// whole probe cost (and theirs) passed on to its caller.
uint64_t ProfileBuilder::compensated(Frame* caller, const Frame& f, uint64_t dur) {
  while (slot_cost_.size() <= f.slot) {
    auto probe = probes_.find(slot_ids_[slot_cost_.size()]);
    if (probe == probes_.end()) {
      slot_cost_.push_back({0, 0});
    } else {
      const fmt::ProbePath p = probe->second.path_kind;
      slot_cost_.push_back({costs_.of(p), costs_.inside_of(p)});
    }
  }
  const SlotCost& c = slot_cost_[f.slot];
  if (caller) caller->nested_cost += f.nested_cost + c.whole;
  return compensate_duration(dur, c.inside, f.nested_cost, residual_);
}

Profile build_profile(fmt::TraceReader& reader, bool compensate) {
  ProfileBuilder b(reader.probes());
  if (compensate) b.compensate(probe_costs(reader.header()));
  reader.rewind();
  fmt::Event ev;
  while (reader.next(ev)) b.add(ev);
  return b.finish(reader.header().end_mono_ns, reader.threads(), reader.lost());
}

}  // namespace atrace::analysis
