// Per-function profile built from a trace's events: calls, inclusive
// (total) and exclusive (self) time, min/max, unfinished calls, and from the
// kernel events of the same threads the off-CPU time, system calls and page
// faults of each call (kernel_attribution.h) and per thread. The analysis
// every report is built from.
//
// Call trees are rebuilt per thread from entry/exit pairs. An exit that does
// not match the innermost open call pops until it finds its entry (frames
// skipped by longjmp or exceptions are closed at that exit's time); an exit
// with no entry (the call started before recording) is ignored and counted.
// Calls still open at the end count as calls, are closed at the end of the
// recording and counted as `unfinished`. Recursion: total_ns counts only the
// outermost activation of a function on a thread, so it never exceeds wall
// time; calls, min and max count every activation. The inclusive kernel
// numbers (`kernel`) follow total_ns: outermost activation only; the self
// ones (`self_kernel`) are what happened while the function was the
// innermost open call, in every activation.
#pragma once

#include <cstdint>
#include <map>
#include <unordered_map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/trace_types.h"
#include "userspace/compensation.h"
#include "userspace/kernel_attribution.h"
#include "userspace/syscall_stats.h"

namespace atrace::fmt {
class TraceReader;
}

namespace atrace::analysis {

struct FunctionStats {
  uint32_t id = 0;
  std::string name;
  std::string module;
  uint32_t tid = 0;  // 0 in the all-threads profile
  uint64_t calls = 0;
  uint64_t unfinished = 0;
  uint64_t unwound = 0;  // of `calls`: left by an exception or forced unwind (Unwind events)
  uint64_t total_ns = 0;
  uint64_t self_ns = 0;
  uint64_t min_ns = 0;
  uint64_t max_ns = 0;
  KernelTimes kernel;       // inclusive: during the calls, callees included
  KernelTimes self_kernel;  // exclusive: not inside traced callees
  // A relevance filter removed the function's probes while recording, at
  // detached_ns (CLOCK_MONOTONIC; the first decision): the numbers above
  // are partial, counted up to then.
  bool detached = false;
  uint64_t detached_ns = 0;
  uint64_t avg_ns() const { return calls ? total_ns / calls : 0; }
};

// One relevance-filter decision (a DETACH event): the function whose probes
// were removed, when, by which rule, and the filter's counts until then.
struct DetachedFunction {
  uint32_t id = 0;
  std::string name;
  std::string module;
  uint64_t ts = 0;  // CLOCK_MONOTONIC ns
  fmt::DetachReason reason = fmt::DetachReason::Absolute;  // may be a value unknown here
  uint64_t calls = 0;
  uint64_t total_ns = 0;
  uint64_t mean_ns() const { return calls ? total_ns / calls : 0; }
};

// A USDT probe's hits (Usdt events): how often it fired, and when it had
// a string argument, how often with each value of the first one.
struct ProbeHits {
  uint32_t id = 0;
  std::string provider;  // "app" of "app:request"
  std::string name;      // "request"
  std::string module;
  uint64_t count = 0;
  bool has_values = false;
  std::map<std::string, uint64_t> values;  // first string argument -> hits
};

struct ThreadSummary {
  uint32_t tid = 0;
  uint32_t pid = 0;
  std::string name;
  uint64_t events = 0;
  // The thread's span in the recording (its first event to its exit, or to
  // the end) minus its off-CPU time; 0 for a thread without events.
  uint64_t oncpu_ns = 0;
  KernelTimes kernel;
};

// One row of `atrace report --syscalls`: a system call number as issued by
// one function (the innermost traced function open at its entry).
inline constexpr const char* kNoFunction = "(no traced function)";
struct SyscallStats {
  std::string function;  // kNoFunction when no traced function was open
  std::string module;
  uint64_t nr = 0;
  std::string name;  // syscall_name(nr)
  uint64_t count = 0;
  uint64_t total_ns = 0;
  uint64_t max_ns = 0;
  uint64_t errors = 0;  // returned -4095..-1
  uint64_t avg_ns() const { return count ? total_ns / count : 0; }
};

struct Profile {
  std::vector<FunctionStats> functions;            // all threads merged
  std::vector<FunctionStats> per_thread;           // one row per (tid, function)
  std::vector<ThreadSummary> threads;
  std::vector<SyscallStats> syscalls;  // by total_ns, largest first
  std::vector<DetachedFunction> detached;  // in time order
  std::vector<ProbeHits> probes;  // USDT probes that fired, most hits first
  uint64_t events = 0;
  uint64_t orphan_exits = 0;  // exits whose entry was not recorded
  uint64_t lost_events = 0;
  // False when the recorder died before counting its losses (no footer):
  // lost_events is then 0 but means "unknown".
  bool lost_known = true;
  uint64_t first_ts = 0, last_ts = 0;
  CompensationResidual compensation;  // --compensate: calls clamped at 0
};

// DETACH events (tid 0: no thread) go to Profile.detached and mark the
// function's rows; they change no call stack. A call of the function open
// at that moment whose exit never comes is closed by the rules above.
// An Unwind event closes the thread's innermost open call of its function,
// wherever it is on the stack, at the event's time (the catch), counted
// `unwound` (docs/exceptions.md).
// A thread that exits (ThreadExit) with calls still open (pthread_exit,
// exit() from a callee) has them closed at its exit time, counted unfinished;
// its open system call (exit, exit_group) is closed at ThreadExit/ProcExit.
// Profile.functions is sorted by total_ns, largest first; per_thread by tid,
// then total_ns. The builder keeps copies of what it needs: the probe vector
// need not outlive it. finish() is called once.
class ProfileBuilder {
 public:
  explicit ProfileBuilder(const std::vector<fmt::ProbeInfo>& probes);
  // --compensate (call before the first add()): each call's duration loses
  // its own probes' inside cost and the whole probe cost of every traced
  // call nested in it (compensation.h). Self times follow. min, max, total
  // and self all use the compensated durations (clamped at 0, counted in
  // Profile::compensation); kernel numbers are unchanged.
  void compensate(const ProbeCosts& costs) { costs_ = costs; }
  void add(const fmt::Event& ev);
  // end_ts closes unfinished calls (the recording's end); an end_ts before
  // the last event (0: unknown, truncated trace) means the last event's time.
  Profile finish(uint64_t end_ts, const std::vector<fmt::ThreadInfo>& threads,
                 const fmt::LostCounts& lost);

 private:
  // Functions are counted in dense slots, not maps: a report reads tens of
  // millions of events and a map insert/erase per call dominated its time.
  struct Frame {
    uint32_t slot;
    uint64_t start;
    uint64_t child_ns;
    KernelTimes kernel_at_entry;  // the thread's totals when the call began
    uint64_t nested_cost = 0;     // --compensate: probe cost of the calls nested in it
  };
  struct ThreadState {
    std::vector<Frame> stack;
    std::vector<uint32_t> active;      // slot -> open activations (recursion)
    std::vector<FunctionStats> stats;  // slot -> this thread's numbers
    KernelTracker kernel;
    bool has_kernel = false;  // a kernel event was seen: totals may be nonzero
    uint64_t events = 0;
    uint64_t first_ts = 0;
    uint32_t pid = 0;
    std::string comm;  // last Comm event: the name when the table has none
  };
  uint32_t slot_of(uint32_t id);
  ThreadState& thread(uint32_t tid);
  void add_kernel(ThreadState& t, const fmt::Event& ev);
  void user_code(ThreadState& t, uint64_t ts);
  void add_self_kernel(ThreadState& t, const KernelTimes& before);
  enum class End { Returned, Unfinished, Unwound };
  void close_frame(ThreadState& t, uint64_t ts, End end) { close_frame_at(t, t.stack.size() - 1, ts, end); }
  void close_frame_at(ThreadState& t, size_t index, uint64_t ts, End end);
  void count_syscall(const std::optional<ClosedSyscall>& c) {
    if (c) syscalls_.add(*c);
  }
  std::vector<SyscallStats> syscall_rows() const;
  void mark_detached(Profile& p);

  std::map<uint32_t, fmt::ProbeInfo> probes_;
  std::vector<uint32_t> dense_slot_;                // id -> slot + 1 (0: none yet)
  std::unordered_map<uint32_t, uint32_t> sparse_slot_;  // ids beyond dense_slot_
  std::vector<uint32_t> slot_ids_;                  // slot -> id
  std::unordered_map<uint32_t, ThreadState> threads_;
  uint32_t last_tid_ = 0;
  ThreadState* last_thread_ = nullptr;
  SyscallTable syscalls_;
  std::vector<DetachedFunction> detached_;
  std::map<uint32_t, ProbeHits> probe_hits_;
  void count_probe(const fmt::Event& ev);
  std::vector<ProbeHits> probe_rows();
  uint64_t events_ = 0, orphan_exits_ = 0, first_ts_ = 0, last_ts_ = 0;
  uint64_t compensated(Frame* caller, const Frame& f, uint64_t dur);
  ProbeCosts costs_;                // all 0: no compensation
  struct SlotCost {
    uint64_t whole, inside;
  };
  std::vector<SlotCost> slot_cost_;  // slot -> its probe costs (filled lazily)
  CompensationResidual residual_;
};

// Orders of report rows (`atrace report --sort=KEY`). The kernel keys sort
// by inclusive numbers: off-CPU time, system call time, system calls, faults.
enum class SortKey { Calls, Total, Self, Avg, Max, Name, Offcpu, SysTime, Syscalls, Faults };
// "calls", "total", "self", "avg", "max", "name", "offcpu", "systime",
// "syscalls", "faults"; nullopt otherwise.
std::optional<SortKey> parse_sort_key(std::string_view s);
// Largest first for numbers, alphabetical for names; ties by name, module.
void sort_functions(std::vector<FunctionStats>& rows, SortKey key);

// Wall time of the recording: the header's end - start clocks, or from the
// start to the last event when the end is missing (truncated trace).
uint64_t recording_duration_ns(const fmt::TraceHeader& h, const Profile& p);

// Reads every event of `reader` (from its first) into a profile, closing
// unfinished calls at the recording's end; `compensate`: with the header's
// calibrated probe costs (none in the file: the plain profile, see
// probe_costs(header).any()).
Profile build_profile(fmt::TraceReader& reader, bool compensate = false);

}  // namespace atrace::analysis
