// Which events of a trace `report`, `script` and `convert` read
// (docs/filters.md): the one place the filters are applied is the reader
// (TraceReader::select), so every command, view and exporter sees the same
// events.
//
//   --tid, --pid, --comm   threads: by thread id, process id (the host's, or
//                          the one a process has in its own pid namespace:
//                          the process table's NSpid), or a glob over the
//                          thread's name in the thread table
//   --host=HOST            a merged trace's recordings: by number or host name
//   --time=START,END       events from START to END after the trace began
//   --function=GLOB        calls of the functions GLOB names and everything
//                          that happens inside them (uftrace's -F): their
//                          callees, kernel events, USDT probes
//   --kind=LIST            (script) event kinds
//
// Events of the recording rather than of a thread (DETACH, tid 0) pass the
// thread and function filters.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "formats/error.h"
#include "formats/trace_types.h"

namespace atrace::formats {

// A filter that cannot select anything in this trace (no thread or function
// matches, an empty time range): one line naming the option.
class FilterError : public Error {
 public:
  using Error::Error;
};

struct EventFilter {
  std::vector<uint32_t> tids;  // empty: every thread
  // Host pids, or pids in a process's own namespace; empty: every process.
  std::vector<uint32_t> pids;
  std::string comm;  // fnmatch glob over thread names; empty: all
  // A merged trace's hosts: their numbers (Event::host) or host names;
  // empty: every host.
  std::vector<std::string> hosts;
  // Nanoseconds after the trace's start; nullopt: its start / its end.
  std::optional<uint64_t> from_ns, to_ns;
  std::string function;          // glob (base/symbol_name.h glob_names); empty: all
  std::vector<EventKind> kinds;  // empty: every kind

  bool any() const {
    return !tids.empty() || !pids.empty() || !comm.empty() || !hosts.empty() || from_ns || to_ns ||
           !function.empty() || !kinds.empty();
  }
};

// The kinds a --kind name stands for: each kind's own name (to_string:
// "entry", "switch-out", ...) or a group: "syscall" (enter and exit),
// "sched" (switches, wakeups, migrations), "proc" (fork, exec, exit),
// "module" (loads and unloads). Empty for an unknown name.
std::vector<EventKind> event_kinds_named(const std::string& name);
// The names accepted, for messages: "entry, exit, ...".
std::string event_kind_names();

// A filter applied to one trace, event by event in time order.
class EventSelection {
 public:
  // Throws FilterError when a part of the filter matches nothing in the
  // trace (threads, functions) or the time range is empty.
  // `processes`: the trace's process table, whose namespace pids --pid
  // also takes; `hosts`: its recordings (TraceReader::hosts()), which
  // --host names.
  EventSelection(const EventFilter& filter, const TraceHeader& header,
                 const std::vector<ProbeInfo>& probes, const std::vector<ThreadInfo>& threads,
                 const std::vector<ProcessInfo>& processes = {},
                 const std::vector<HostClocks>& hosts = {});

  // Whether events of `tid` can pass (thread and host filters only; tid
  // 0, the recording's own events: when its host passes).
  bool thread_selected(uint32_t tid, uint32_t pid, uint16_t host = 0) const;
  // Whether `ev` passes; call in the reader's order (the function filter
  // follows each thread's calls).
  bool keep(const Event& ev);
  // Back to the first event (TraceReader::rewind).
  void restart() { depth_.clear(); }
  // The end of the trace as its readers should see it: the range's END.
  uint64_t end_ns(uint64_t trace_end) const;

 private:
  bool in_function(const Event& ev);

  std::unordered_set<uint32_t> tids_, pids_;
  std::unordered_set<uint64_t> comm_tids_;  // by thread_key
  std::vector<bool> hosts_;                 // by host number
  bool by_tid_ = false, by_pid_ = false, by_comm_ = false, by_host_ = false;
  std::unordered_set<uint32_t> functions_;  // probe ids --function names
  bool by_function_ = false;
  std::unordered_map<uint64_t, uint32_t> depth_;  // thread_key -> open calls of those functions
  uint64_t lo_ = 0, hi_ = UINT64_MAX;
  std::vector<bool> kinds_;  // by kind number; empty: all
};

}  // namespace atrace::formats
