// Applying the read filters (event_filter.h). The function filter follows
// each thread's calls with one counter: the open calls of the named
// functions. It needs no more: a call inside one of them is kept whatever
// it is, and the replay (analysis/call_replay.h) pairs what is kept.
#include "formats/event_filter.h"

#include <fnmatch.h>

#include <algorithm>

#include "base/symbol_name.h"

namespace atrace::formats {
namespace {

constexpr EventKind kAllKinds[] = {
    EventKind::FuncEntry,      EventKind::FuncExit,      EventKind::ThreadExit,
    EventKind::SchedSwitchOut, EventKind::SchedSwitchIn, EventKind::SchedWakeup,
    EventKind::SchedMigrate,   EventKind::SyscallEnter,  EventKind::SyscallExit,
    EventKind::PageFault,      EventKind::ProcFork,      EventKind::ProcExec,
    EventKind::ProcExit,       EventKind::Comm,          EventKind::Detach,
    EventKind::Usdt,           EventKind::Unwind,        EventKind::ModuleLoad,
    EventKind::ModuleUnload,   EventKind::Gap,           EventKind::Message,
};

struct KindGroup {
  const char* name;
  std::vector<EventKind> kinds;
};

const std::vector<KindGroup>& groups() {
  static const std::vector<KindGroup> g = {
      {"syscall", {EventKind::SyscallEnter, EventKind::SyscallExit}},
      {"sched",
       {EventKind::SchedSwitchOut, EventKind::SchedSwitchIn, EventKind::SchedWakeup,
        EventKind::SchedMigrate}},
      {"proc", {EventKind::ProcFork, EventKind::ProcExec, EventKind::ProcExit}},
      {"module", {EventKind::ModuleLoad, EventKind::ModuleUnload}},
  };
  return g;
}

std::string list(const std::vector<uint32_t>& v) {
  std::string s;
  for (uint32_t x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

}  // namespace

std::vector<EventKind> event_kinds_named(const std::string& name) {
  for (const auto& g : groups())
    if (name == g.name) return g.kinds;
  for (EventKind k : kAllKinds)
    if (name == to_string(k)) return {k};
  return {};
}

std::string event_kind_names() {
  std::string s;
  for (const auto& g : groups()) s += (s.empty() ? "" : ", ") + std::string(g.name);
  for (EventKind k : kAllKinds) {
    bool grouped = false;
    for (const auto& g : groups())
      grouped |= std::find(g.kinds.begin(), g.kinds.end(), k) != g.kinds.end();
    if (!grouped) s += ", " + std::string(to_string(k));
  }
  return s;
}

EventSelection::EventSelection(const EventFilter& f, const TraceHeader& header,
                               const std::vector<ProbeInfo>& probes,
                               const std::vector<ThreadInfo>& threads,
                               const std::vector<ProcessInfo>& processes,
                               const std::vector<HostClocks>& hosts) {
  by_host_ = !f.hosts.empty();
  if (by_host_) {
    hosts_.assign(std::max<size_t>(hosts.size(), 1), false);
    std::string known;
    for (size_t h = 0; h < hosts_.size(); h++) {
      const std::string name = h < hosts.size() ? hosts[h].host_name : "";
      known += (known.empty() ? "" : ", ") + std::to_string(h) + (name.empty() ? "" : " " + name);
      for (const auto& want : f.hosts)
        if (want == std::to_string(h) || (!name.empty() && want == name)) hosts_[h] = true;
    }
    if (std::find(hosts_.begin(), hosts_.end(), true) == hosts_.end()) {
      std::string wanted;
      for (const auto& w : f.hosts) wanted += (wanted.empty() ? "" : ",") + w;
      throw FilterError("--host=" + wanted + ": no such host in the trace (its hosts: " + known +
                        ")");
    }
  }
  by_tid_ = !f.tids.empty();
  by_pid_ = !f.pids.empty();
  by_comm_ = !f.comm.empty();
  tids_.insert(f.tids.begin(), f.tids.end());
  pids_.insert(f.pids.begin(), f.pids.end());
  // A container's process is known by its own pid too: "1" is its init.
  // Several containers may each have a 1: each is kept.
  for (const auto& p : processes)
    if (p.own_pid_ns() && std::find(f.pids.begin(), f.pids.end(), p.ns_pid) != f.pids.end())
      pids_.insert(p.pid);
  bool tid_seen = false, pid_seen = false;
  for (const auto& t : threads) {
    if (by_host_ && (t.host >= hosts_.size() || !hosts_[t.host])) continue;
    tid_seen |= tids_.count(t.tid) > 0;
    pid_seen |= pids_.count(t.pid) > 0;
    if (by_comm_ && fnmatch(f.comm.c_str(), t.name.c_str(), 0) == 0)
      comm_tids_.insert(thread_key(t.host, t.tid));
  }
  if (by_tid_ && !tid_seen)
    throw FilterError("--tid=" + list(f.tids) + ": no such thread in the trace");
  if (by_pid_ && !pid_seen)
    throw FilterError("--pid=" + list(f.pids) + ": no such process in the trace");
  if (by_comm_ && comm_tids_.empty())
    throw FilterError("--comm=" + f.comm + ": no thread of the trace has a matching name");

  by_function_ = !f.function.empty();
  for (const auto& p : probes)
    if (by_function_ && base::glob_names(f.function, p.name)) functions_.insert(p.id);
  if (by_function_ && functions_.empty())
    throw FilterError("--function=" + f.function + ": no function of the trace matches");

  const uint64_t t0 = header.start_mono_ns;
  if (f.from_ns) lo_ = t0 + *f.from_ns;
  if (f.to_ns) hi_ = t0 + *f.to_ns;
  if (lo_ > hi_) throw FilterError("--time: the range ends before it starts");

  if (!f.kinds.empty()) {
    kinds_.assign(256, false);
    for (EventKind k : f.kinds) kinds_[static_cast<uint8_t>(k)] = true;
  }
}

bool EventSelection::thread_selected(uint32_t tid, uint32_t pid, uint16_t host) const {
  if (by_host_ && (host >= hosts_.size() || !hosts_[host])) return false;
  if (tid == 0) return true;  // the recording's own events
  return (!by_tid_ || tids_.count(tid)) && (!by_pid_ || pids_.count(pid)) &&
         (!by_comm_ || comm_tids_.count(thread_key(host, tid)));
}

bool EventSelection::in_function(const Event& ev) {
  if (ev.tid == 0) return true;
  uint32_t& depth = depth_[thread_key(ev)];
  const bool named = functions_.count(ev.id) > 0;
  switch (ev.kind) {
    case EventKind::FuncEntry:
      if (named) ++depth;
      return depth > 0;
    case EventKind::FuncExit:
    case EventKind::Unwind:
      if (named && depth > 0) {
        --depth;
        return true;
      }
      return depth > 0;
    case EventKind::Usdt: return named || depth > 0;
    case EventKind::ThreadExit:
    case EventKind::Gap: {  // the replay closes every open call here
      bool inside = depth > 0;
      depth = 0;
      return inside;
    }
    default: return depth > 0;
  }
}

bool EventSelection::keep(const Event& ev) {
  if (!thread_selected(ev.tid, ev.pid, ev.host)) return false;
  // Before the time range: the function filter must see every call.
  if (by_function_ && !in_function(ev)) return false;
  if (ev.ts < lo_ || ev.ts > hi_) return false;
  return kinds_.empty() || kinds_[static_cast<uint8_t>(ev.kind)];
}

uint64_t EventSelection::end_ns(uint64_t trace_end) const {
  return hi_ == UINT64_MAX ? trace_end : std::min(trace_end, hi_);
}

}  // namespace atrace::formats
