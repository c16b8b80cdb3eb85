// What the timeline exporters (Chrome JSON, Perfetto, Paje) draw, computed
// once for all of them from the events in time order:
//
//   TraceNames   names of functions (probe table), threads, processes,
//                system calls, and of the spans below
//   Timeline     per-thread spans: function calls, system calls and off-CPU
//                periods, opened and closed as events arrive, handed to a
//                TimelineSink; a listener on the call replay (call_replay.h)
//                as the profile is, so that a viewer shows the calls and
//                times `atrace report` counts
//   Instant      the other events (faults, fork, exec, detach, USDT, ...) as
//                a name and arguments
//
// Spans of one thread always nest: a function event closes the kernel spans
// still open (their closing event was lost: no uprobe fires while the
// thread is off-CPU or in a system call), an exit closes the calls above
// its entry (longjmp, exceptions), an unwound call ends the calls still
// open above it, and an off-CPU period lies inside the system call it
// blocked in. Events of tid 0 (the recorder's) draw nothing. The Timeline
// holds the open spans of each thread and nothing else: memory does not
// grow with the trace.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/call_replay.h"
#include "formats/trace_types.h"

namespace atrace::analysis {

// The pid or tid a timeline shows for a process or thread of a merged
// trace's `host` (Event::host): pids and tids repeat across hosts, the
// viewers key tracks by them. Host 0 (a single recording's only one) keeps
// its ids, so single recordings export as they always did; host h > 0
// shows h * kHostIdStride + id (above any pid_max, 2^22).
constexpr uint32_t kHostIdStride = 10000000;
inline uint32_t shown_id(uint16_t host, uint32_t id) { return host * kHostIdStride + id; }
inline uint16_t host_of_shown(uint32_t shown) {
  return static_cast<uint16_t>(shown / kHostIdStride);
}
inline uint32_t real_id(uint32_t shown) { return shown % kHostIdStride; }

enum class SpanKind : uint8_t {
  Function,  // a traced call: FuncEntry to FuncExit
  Syscall,   // SyscallEnter to SyscallExit
  OffCpu,    // SchedSwitchOut to SchedSwitchIn
};

struct Span {
  SpanKind kind = SpanKind::Function;
  uint32_t id = 0;    // Function: probe id
  uint64_t nr = 0;    // Syscall: the number entered
  uint8_t state = 0;  // OffCpu: prev_state (formats::kSwitchRunnable: preempted)
  uint64_t start = 0;
  // Function: its entry's recorded arguments (record --args), valid during
  // the sink's call; nullptr or empty: none.
  const std::vector<formats::ProbeArg>* args = nullptr;
  bool blocked() const { return state != formats::kSwitchRunnable; }
};

enum class SpanEnd : uint8_t {
  Closed,      // by its own closing event (exit, syscall exit, switch-in)
  Unwound,     // a function left without its exit: closed by a caller's exit
               // or by an Unwind event (an exception's catch, a forced unwind)
  Repaired,    // a kernel span whose closing event was lost: closed when the
               // thread was next seen running
  ThreadExit,  // still open when its thread exited
  TraceEnd,    // still open at the end of the recording
  Abandoned,   // a function left by longjmp: closed where its thread was seen below it
  Untimed,     // a function whose return could not be seen (past the kernel's 64
               // nested return probes): its span ends where its thread was seen
               // below it, a bound, not a duration; views say so
};
// What the profile counts as `unfinished`.
inline bool unfinished(SpanEnd e) { return e == SpanEnd::ThreadExit || e == SpanEnd::TraceEnd; }

struct SpanClose {
  uint64_t ts = 0;
  SpanEnd how = SpanEnd::Closed;
  bool has_ret = false;  // Syscall closed by its exit: the return value
  int64_t ret = 0;
  // Function returned by its exit: the return value it recorded
  // (record --retval), valid during the sink's call; nullptr: none.
  const std::vector<formats::ProbeArg>* values = nullptr;
};

class TimelineSink {
 public:
  virtual ~TimelineSink() = default;
  // pid, tid: shown_id()s (the ids themselves in a single recording).
  virtual void begin(uint32_t pid, uint32_t tid, const Span& s) = 0;
  // Spans end innermost first, never after an enclosing one.
  virtual void end(uint32_t pid, uint32_t tid, const Span& s, const SpanClose& c) = 0;
};

// The spans of a call replay (call_replay.h) handed to a sink. Alone (its
// own replay): add() each event, then finish(). On a shared replay (the
// HTML report reads the trace once for all its views): construct it with
// the replay, feed and finish the replay. The replay's times are raw: a
// timeline never compensates.
class Timeline : public ReplayListener {
 public:
  explicit Timeline(TimelineSink& sink);
  Timeline(CallReplay& replay, TimelineSink& sink);
  Timeline(const Timeline&) = delete;
  Timeline& operator=(const Timeline&) = delete;
  // Feeds one event (time order per thread, as TraceReader::next gives
  // them). Returns span_boundary(ev).
  bool add(const formats::Event& ev);
  // Closes every span still open, at the recording's end: `end_ts` (the
  // header's end) or the last event's time when that is later (0: unknown).
  void finish(uint64_t end_ts) { own_->finish(end_ts); }
  // True when the event is a span boundary (entry, exit, unwind, switch,
  // system call): the others are what exporters show as instants.
  // ThreadExit and ProcExit close spans and still return false.
  static bool span_boundary(const formats::Event& ev);

  void on_call_begin(const ReplayThread& t, const OpenCall& c) override;
  void on_call_end(const ReplayThread& t, const ClosedCall& c) override;
  void on_interval_open(const ReplayThread& t, const KernelInterval& i) override;
  void on_interval_close(const ReplayThread& t, const KernelInterval& i,
                         const IntervalClose& c) override;

 private:
  struct Frame {
    Span span;
    // Already drawn as ended: a call below it was unwound while it was
    // still open, and spans must nest (it ended there too).
    bool drawn = false;
    std::vector<formats::ProbeArg> args;  // span.args points here when drawn
  };
  void end(const ReplayThread& t, Frame& f, const SpanClose& c);

  std::unique_ptr<CallReplay> own_;  // alone: its replay
  CallReplay& replay_;
  TimelineSink& sink_;
  std::vector<std::vector<Frame>> frames_;  // by ReplayThread::index: its open calls
};

// Names of the things exporters show; built from a trace's tables.
class TraceNames {
 public:
  // long_names: full demangled names instead of short ones
  // (function_names.h).
  TraceNames(const formats::TraceHeader& header, const std::vector<formats::ProbeInfo>& probes,
             const std::vector<formats::ThreadInfo>& threads, bool long_names = false);
  // The function's shown name, "<probe N>" for an id not in the table.
  const std::string& function(uint32_t id);
  // Its module's file name ("" when unknown).
  const std::string& module(uint32_t id);
  // Threads and processes are named by their shown_id().
  // The thread's name in the file's table ("" when not there).
  const std::string& thread(uint32_t tid) const;
  // A process's name: its main thread's, else the traced program's file
  // name for the traced process, else "pid N"; then what the process
  // table adds (process_tag: "prog [container 3f2a9c1b0d4e] pid 1").
  std::string process(uint32_t pid) const;
  // The trace's process table (TraceReader::processes).
  void set_processes(const std::vector<formats::ProcessInfo>& processes);
  // A merged trace's recordings (TraceReader::hosts()): with more than
  // one, a process's name starts with its host's ("web1: server").
  void set_hosts(const std::vector<formats::HostClocks>& hosts);
  bool several_hosts() const { return !hosts_.empty(); }
  // Host `h`'s label (host_labels, process_text.h); "" for one host.
  std::string host(uint16_t h) const;
  const std::string& syscall(uint64_t nr);
  // "function name", "syscall:read", "off-cpu (blocked)", "off-cpu (runnable)".
  const std::string& span(const Span& s);

 private:
  struct Function {
    std::string name, module;
  };
  std::unordered_map<uint32_t, Function> functions_;
  std::unordered_map<uint32_t, std::string> threads_;
  std::unordered_map<uint32_t, std::string> process_tags_;  // process_tag()
  std::unordered_map<uint64_t, std::string> syscalls_;      // "syscall:NAME"
  std::unordered_map<uint64_t, std::string> syscall_names_;
  uint32_t target_pid_ = 0;
  std::string target_name_;
  std::vector<std::string> hosts_;  // set_hosts: empty for one host
};

// An event shown as a point in time, with its arguments.
struct InstantArg {
  enum class Type : uint8_t { Int, Uint, Hex, Text };
  std::string key;
  Type type = Type::Uint;
  uint64_t value = 0;  // Int: two's complement
  std::string text;
};
struct Instant {
  std::string name;           // "fault", "detach: FUNCTION", ...
  const char* category = "";  // "kernel", "atrace", "usdt"
  bool global = false;        // about the recording, not a thread (DETACH: tid 0)
  std::vector<InstantArg> args;
};
// Fills `out` for an event that is not a span boundary (Timeline::add
// returned false); any kind, known or not.
void describe_instant(const formats::Event& ev, TraceNames& names, Instant& out);

}  // namespace atrace::analysis
