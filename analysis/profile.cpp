// ProfileBuilder: folds every call the replay closes (call_replay.h) into
// per-(thread, function) statistics; the all-threads rows are sums of
// those.
#include "analysis/profile.h"

#include <algorithm>
#include <tuple>

#include "analysis/syscall_names.h"
#include "formats/trace_reader.h"

namespace atrace::analysis {

ProfileBuilder::ProfileBuilder(const std::vector<formats::ProbeInfo>& probes)
    : ProfileBuilder(std::make_unique<CallReplay>(probes), nullptr, probes) {}

ProfileBuilder::ProfileBuilder(CallReplay& replay, const std::vector<formats::ProbeInfo>& probes)
    : ProfileBuilder(nullptr, &replay, probes) {}

ProfileBuilder::ProfileBuilder(std::unique_ptr<CallReplay> own, CallReplay* shared,
                               const std::vector<formats::ProbeInfo>& probes)
    : own_(std::move(own)), replay_(own_ ? *own_ : *shared) {
  for (const auto& p : probes) probes_[p.id] = p;
  replay_.listen(*this);
}

void ProfileBuilder::on_event(const formats::Event& ev, const ReplayThread* t) {
  if (events_ == 0 || ev.ts < first_ts_) first_ts_ = ev.ts;
  last_ts_ = std::max(last_ts_, ev.ts);
  events_++;
  if (ev.kind == formats::EventKind::Detach) {
    DetachedFunction d;
    d.id = ev.id;
    d.ts = ev.ts;
    d.reason = formats::detach_reason(ev.flags);
    d.calls = ev.arg0;
    d.total_ns = ev.arg1;
    detached_.push_back(std::move(d));
  } else if (ev.kind == formats::EventKind::Usdt) {
    count_probe(ev);
  } else if (ev.kind == formats::EventKind::Message && t) {
    // The message's function: the innermost call open on its thread at
    // the send's or receive's return, which is inside that call.
    messages_.add(t->stack.empty() ? 0 : t->stack.back().slot + 1, ev);
  }
}

// Folds one closed call into its function's numbers, and its thread's
// when per-thread rows are asked for.
void ProfileBuilder::on_call_end(const ReplayThread& t, const ClosedCall& c) {
  if (c.slot >= merged_.size()) {
    merged_.resize(c.slot + 1);
    slot_host_.resize(c.slot + 1);
  }
  merged_[c.slot].add(c);
  slot_host_[c.slot] = t.host;  // a merged trace's probes are each of one host
  if (t.index >= called_.size()) called_.resize(t.index + 1);
  auto& called = called_[t.index];
  if (c.slot >= called.size()) called.resize(c.slot + 1);
  called[c.slot] = true;
  if (!per_thread_) return;
  const uint64_t key = uint64_t{t.index} << 32 | c.slot;
  auto [it, fresh] = thread_row_of_.try_emplace(key, static_cast<uint32_t>(thread_rows_.size()));
  if (fresh) thread_rows_.push_back({t.index, c.slot, {}});
  thread_rows_[it->second].counts.add(c);
}

namespace {

// The name and module of a row, from the probe table.
void name_row_from(const std::map<uint32_t, formats::ProbeInfo>& probes, FunctionStats& s) {
  auto probe = probes.find(s.id);
  if (probe != probes.end()) {
    s.name = probe->second.name;
    s.module = probe->second.module;
  } else {
    s.name = "<probe " + std::to_string(s.id) + ">";
  }
}

// Whether the thread may lack events: it has a Gap (the recorder knew it
// lost some of this thread's), or events were lost on a CPU it ran on (the
// footer counts losses per CPU, and files before Gap events have only
// that: a thread that shared a CPU with them may have lost some of its
// own). Unknown losses (a killed recorder) mark nothing by CPU: the
// headline says "lost: unknown".
bool may_lack_events(const ReplayThread& t, const formats::LostCounts& lost) {
  if (t.gaps > 0) return true;
  const size_t n = std::min(t.cpus.size(), lost.per_cpu.size());
  for (size_t cpu = 0; cpu < n; ++cpu)
    if (t.cpus[cpu] && lost.per_cpu[cpu] > 0) return true;
  return false;
}

bool by_total(const FunctionStats& a, const FunctionStats& b) {
  if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
  return a.name < b.name;
}

}  // namespace

Profile ProfileBuilder::finish(uint64_t end_ts, const std::vector<formats::ThreadInfo>& threads,
                               const formats::LostCounts& lost) {
  own_->finish(end_ts);
  return result(threads, lost);
}

// The functions' rows, merged and (when asked) per thread, and their names.
// A row is partial when one of the threads that called it may lack events.
void ProfileBuilder::function_rows(Profile& p, const formats::LostCounts& lost) {
  std::vector<formats::ProbeInfo> table;
  for (const auto& [id, probe] : probes_) table.push_back(probe);
  p.names = FunctionNames(table, long_names_);

  std::vector<bool> partial_slot(merged_.size(), false);
  std::vector<bool> partial_thread(called_.size(), false);
  for (const auto& [key, t] : replay_.threads()) {
    if (t.index >= called_.size() || !may_lack_events(t, lost)) continue;
    partial_thread[t.index] = true;
    const auto& called = called_[t.index];
    for (size_t slot = 0; slot < called.size(); ++slot)
      if (called[slot]) partial_slot[slot] = true;
  }
  auto row = [&](uint32_t slot, const CallCounts& counts, uint32_t tid, uint16_t host,
                 bool partial) {
    FunctionStats s;
    counts.fill(s);
    s.id = replay_.id_of_slot(slot);
    s.tid = tid;
    s.host = host;
    s.partial = partial;
    name_row_from(probes_, s);
    return s;
  };

  // All threads: in id order, then by total (the sort is not stable: the
  // same order in gives the same rows out).
  std::vector<uint32_t> slots;
  for (uint32_t slot = 0; slot < merged_.size(); ++slot)
    if (merged_[slot].calls) slots.push_back(slot);
  std::sort(slots.begin(), slots.end(),
            [&](uint32_t a, uint32_t b) { return replay_.id_of_slot(a) < replay_.id_of_slot(b); });
  p.functions.reserve(slots.size());
  for (uint32_t slot : slots)
    p.functions.push_back(row(slot, merged_[slot], 0, slot_host_[slot], partial_slot[slot]));
  std::sort(p.functions.begin(), p.functions.end(), by_total);

  // Per thread: threads in the replay's order, each's functions by slot
  // (result() sorts them by tid, then total).
  if (!per_thread_) return;
  std::vector<std::vector<uint32_t>> of_thread(called_.size());  // thread index -> rows
  for (uint32_t i = 0; i < thread_rows_.size(); ++i) of_thread[thread_rows_[i].thread].push_back(i);
  p.per_thread.reserve(thread_rows_.size());
  for (const auto& [key, t] : replay_.threads()) {
    if (t.index >= of_thread.size()) continue;
    auto& rows = of_thread[t.index];
    std::sort(rows.begin(), rows.end(),
              [&](uint32_t a, uint32_t b) { return thread_rows_[a].slot < thread_rows_[b].slot; });
    for (uint32_t i : rows) {
      const ThreadRow& r = thread_rows_[i];
      p.per_thread.push_back(row(r.slot, r.counts, t.tid, t.host, partial_thread[t.index]));
    }
  }
}

Profile ProfileBuilder::snapshot() {
  Profile p;
  p.events = events_;
  p.orphan_exits = replay_.orphan_exits();
  p.first_ts = first_ts_;
  p.last_ts = last_ts_;
  function_rows(p, {});
  return p;
}

Profile ProfileBuilder::result(const std::vector<formats::ThreadInfo>& threads,
                               const formats::LostCounts& lost) {
  const uint64_t end = replay_.end_ts();
  Profile p;
  p.events = events_;
  p.orphan_exits = replay_.orphan_exits();
  p.compensation = replay_.compensation();
  p.lost_events = lost.total();
  p.lost_known = !lost.per_cpu.empty();  // the footer always has one count a CPU
  p.first_ts = first_ts_;
  p.last_ts = last_ts_;
  function_rows(p, lost);
  std::stable_sort(p.per_thread.begin(), p.per_thread.end(),
                   [](const FunctionStats& a, const FunctionStats& b) {
                     if (a.host != b.host) return a.host < b.host;
                     if (a.tid != b.tid) return a.tid < b.tid;
                     return by_total(a, b);
                   });

  // Threads: the file's table (names) joined with what the events showed.
  // By host, then tid (formats::thread_key): a merged trace's hosts in turn.
  std::map<uint64_t, ThreadSummary> summaries;
  for (const auto& ti : threads) {
    ThreadSummary& s = summaries[formats::thread_key(ti.host, ti.tid)];
    s.host = ti.host;
    s.tid = ti.tid;
    s.pid = ti.pid;
    s.name = ti.name;
    s.events = ti.events;
  }
  for (const auto& [key, t] : replay_.threads()) {
    const uint32_t tid = t.tid;
    ThreadSummary& s = summaries[key];
    s.host = t.host;
    s.tid = tid;
    if (s.pid == 0) s.pid = t.pid;
    if (s.name.empty()) s.name = t.comm;
    s.events = t.events;
    s.partial = may_lack_events(t, lost);
    s.kernel = t.kernel.totals();
    uint64_t last = t.kernel.exited() ? t.kernel.exit_ts() : end;
    uint64_t span = last > t.first_ts ? last - t.first_ts : 0;
    s.oncpu_ns = span > s.kernel.offcpu_ns() ? span - s.kernel.offcpu_ns() : 0;
  }
  for (auto& [tid, s] : summaries) p.threads.push_back(std::move(s));

  p.syscalls = syscall_rows();
  p.messages = message_rows();
  mark_detached(p);
  p.probes = probe_rows();
  merged_.clear();
  called_.clear();
  thread_row_of_.clear();
  thread_rows_.clear();
  return p;
}

void ProfileBuilder::count_probe(const formats::Event& ev) {
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
  std::stable_sort(
      detached_.begin(), detached_.end(),
      [](const DetachedFunction& a, const DetachedFunction& b) { return a.ts < b.ts; });
  std::map<uint32_t, uint64_t> first;  // id -> its first decision
  for (auto& d : detached_) {
    FunctionStats named;
    named.id = d.id;
    name_row_from(probes_, named);
    d.name = std::move(named.name);
    d.module = std::move(named.module);
    if (auto it = probes_.find(d.id); it != probes_.end()) d.path = it->second.path_kind;
    // Patched instead (--fast-path=hot): its calls go on being recorded,
    // its numbers are whole.
    if (d.reason != formats::DetachReason::PatchedInstead) first.try_emplace(d.id, d.ts);
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

// The function a kernel attribution's key names (0: none running, else
// the replay's slot + 1), as the per-function rows name it.
void ProfileBuilder::name_attributed(uint64_t key, std::string& function,
                                     std::string& module) const {
  if (key == 0) {
    function = kNoFunction;
    return;
  }
  FunctionStats named;
  named.id = replay_.id_of_slot(key - 1);
  name_row_from(probes_, named);
  function = std::move(named.name);
  module = std::move(named.module);
}

// The --syscalls rows, named, largest total first.
std::vector<SyscallStats> ProfileBuilder::syscall_rows() const {
  std::vector<SyscallStats> rows;
  for (const auto& c : syscalls_.rows()) {
    SyscallStats r;
    name_attributed(c.key, r.function, r.module);
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

// The messages rows, named, most bytes first.
std::vector<MessageStats> ProfileBuilder::message_rows() const {
  std::vector<MessageStats> rows;
  for (const auto& c : messages_.rows()) {
    MessageStats r;
    name_attributed(c.key, r.function, r.module);
    r.host = c.host;
    r.protocol = formats::to_string(c.proto);
    r.peer = c.peer;
    r.sent = c.sent;
    r.sent_bytes = c.sent_bytes;
    r.received = c.received;
    r.received_bytes = c.received_bytes;
    r.sent_matched = c.sent_matched;
    r.received_matched = c.received_matched;
    r.latencies = c.latencies;
    r.latency_p50_ns = c.latency_p50_ns;
    r.latency_p99_ns = c.latency_p99_ns;
    rows.push_back(std::move(r));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const MessageStats& a, const MessageStats& b) {
    const uint64_t x = a.sent_bytes + a.received_bytes, y = b.sent_bytes + b.received_bytes;
    if (x != y) return x > y;
    return std::tie(a.function, a.protocol, a.peer) < std::tie(b.function, b.protocol, b.peer);
  });
  return rows;
}

std::optional<SortKey> parse_sort_key(std::string_view s) {
  if (s == "calls") return SortKey::Calls;
  if (s == "total") return SortKey::Total;
  if (s == "self") return SortKey::Self;
  if (s == "avg") return SortKey::Avg;
  if (s == "min") return SortKey::Min;
  if (s == "max") return SortKey::Max;
  if (s == "name") return SortKey::Name;
  if (s == "offcpu") return SortKey::Offcpu;
  if (s == "selfoff") return SortKey::SelfOffcpu;
  if (s == "systime") return SortKey::SysTime;
  if (s == "selfsys") return SortKey::SelfSysTime;
  if (s == "syscalls") return SortKey::Syscalls;
  if (s == "faults") return SortKey::Faults;
  return std::nullopt;
}

const char* sort_key_names() {
  return "calls, total, self, avg, min, max, name, offcpu, selfoff, systime, selfsys, syscalls, "
         "faults";
}

void sort_functions(std::vector<FunctionStats>& rows, SortKey key,
                    const std::vector<SortKey>& then) {
  auto value = [](const FunctionStats& f, SortKey k) -> uint64_t {
    switch (k) {
      case SortKey::Calls: return f.calls;
      case SortKey::Total: return f.total_ns;
      case SortKey::Self: return f.self_ns;
      case SortKey::Avg: return f.avg_ns();
      case SortKey::Min: return f.min_ns;
      case SortKey::Max: return f.max_ns;
      case SortKey::Offcpu: return f.kernel.offcpu_ns();
      case SortKey::SelfOffcpu: return f.self_kernel.offcpu_ns();
      case SortKey::SysTime: return f.kernel.syscall_ns;
      case SortKey::SelfSysTime: return f.self_kernel.syscall_ns;
      case SortKey::Syscalls: return f.kernel.syscalls;
      case SortKey::Faults: return f.kernel.faults;
      case SortKey::Name: break;
    }
    return 0;
  };
  std::vector<SortKey> keys = {key};
  keys.insert(keys.end(), then.begin(), then.end());
  std::stable_sort(rows.begin(), rows.end(), [&](const FunctionStats& a, const FunctionStats& b) {
    for (SortKey k : keys) {
      if (k == SortKey::Name) {
        if (a.name != b.name) return a.name < b.name;
        continue;
      }
      uint64_t va = value(a, k), vb = value(b, k);
      if (va != vb) return va > vb;
    }
    if (a.name != b.name) return a.name < b.name;
    return a.module < b.module;
  });
}

uint64_t recording_duration_ns(const formats::TraceHeader& h, const Profile& p) {
  uint64_t start = h.start_mono_ns ? h.start_mono_ns : p.first_ts;
  uint64_t end = h.end_mono_ns ? h.end_mono_ns : p.last_ts;
  return end > start ? end - start : 0;
}

Profile build_profile(formats::TraceReader& reader, bool compensate, bool long_names) {
  ProfileBuilder b(reader.probes());
  if (compensate) b.compensate(probe_costs(reader.header()));
  b.long_names(long_names);
  reader.rewind();
  formats::Event ev;
  while (reader.next(ev)) b.add(ev);
  return b.finish(reader.header().end_mono_ns, reader.threads(), reader.lost());
}

}  // namespace atrace::analysis
