// The one call-replay engine every analysis listens to: it reads a trace's
// events once, in time order, keeps each thread's stack of open calls and
// its kernel state, applies the rules for imperfect traces, and tells its
// listeners what happened. The profile (profile.h), the call tree
// (call_tree.h), the timeline (export_timeline.h) and `atrace script`
// (script_format.h) are listeners; a report with several views puts them all
// on one replay and reads the trace once.
//
// The rules, written here and nowhere else:
//
// - An exit pops back to its entry: the innermost open call of its function.
//   Calls above it were left without their exit (longjmp, an exception the
//   recorder did not see): they end at that exit's time too (Abandoned), or
//   Untimed if they were known to have no return probe.
// - Calls the thread left without their return (docs/safety.md): the
//   recorder compares stack pointers and writes, before the event that
//   showed it, an Unwind naming the call by its entry's time (arg0):
//   UnwindHow::Abandoned (longjmp/siglongjmp: it ends there, Abandoned,
//   with its duration up to there) or UnwindHow::NestingLimit (the kernel
//   gave it no return probe, past its 64 nested ones: it ends there,
//   Untimed, with no duration at all). An Unwind whose call is no longer
//   open (an exception's Unwind closed it first) does nothing.
// - Untimed calls (untimed_reason() maps an event to one, in one place)
//   are counted and never unfinished: they have no duration, so no view
//   shows one (dur and self_ns are 0, their callees' time goes to their
//   caller's callees' time), and calls still open at a thread's exit or the
//   end that are known untimed close as Untimed too.
// - An exit with no open call of its function (its entry came before the
//   recording started) is ignored and counted (orphan_exits()).
// - An Unwind event (docs/exceptions.md) closes the thread's innermost open
//   call of its function, wherever it is on the stack, at the event's time
//   (the catch); the others stay open. With none open it does nothing.
// - A thread that exits (ThreadExit) with calls open (pthread_exit, exit()
//   from a callee) has them closed at its exit; calls still open at the end
//   of the recording are closed then (both: unfinished).
// - A program's exec (ProcExec) ends the calls open on its thread: the old
//   program is gone, and they never return (Exec: unfinished).
// - A child process (ProcFork of a process, in the forking thread's
//   stream) has a copy of the forking thread's open calls, which it may
//   return from: an exit of the child that finds no open call of its
//   function but one of those copies makes the copies up to that one
//   calls of the child (begun at their entry, before the fork; the child's
//   own calls above them are left: Abandoned) and returns from it. Copies
//   the child never returns from (it execs, or exits from inside them)
//   are not calls of the child.
// - A Gap event (the recorder lost events of this thread there: its ring
//   was full) closes every call open on the thread (Gap: unfinished) at
//   the thread's last event before the hole: the Gap carries the time of
//   its first event after it, and what the calls did in between is
//   unknown, so they are given no more than was seen. It counts the thread's losses
//   (ReplayThread::lost). An exit after it whose entry came before it, or was lost, finds no open
//   call: an orphan, never paired with an older activation of its function
//   (which would be recursion that never happened).
// - Recursion: every activation is a call; `outermost` says whether another
//   activation of the same function is open below it on its thread (a
//   function's inclusive total counts only its outermost activations, so it
//   never exceeds wall time).
// - Kernel intervals (kernel_attribution.h): each thread's off-CPU periods
//   and system calls move its running totals; a call's inclusive kernel
//   numbers are the totals at its end minus those at its start, its self
//   ones what the totals gained while it was the innermost open call. A
//   function event closes intervals still open (their closing event was
//   lost).
// - --compensate (compensation.h): with probe costs given, a call's
//   duration loses its own probes' inside cost and the whole cost of every
//   traced call nested in it; self times follow.
// - DETACH events (tid 0) belong to the recording, not to a thread: they
//   reach listeners through on_event only. USDT events open nothing.
//
// Listeners are told, per event and in this order: the kernel intervals
// and calls it closed or opened (innermost first), then on_event. Memory:
// the open calls and each thread's state, never the events.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/compensation.h"
#include "analysis/kernel_attribution.h"
#include "formats/trace_types.h"

namespace atrace::analysis {

// How a call ended.
enum class CallEnd : uint8_t {
  Returned,    // by its own exit
  Abandoned,   // left without its exit (longjmp): closed where the thread was seen below it
  Unwound,     // by an Unwind event (an exception's catch, a forced unwind)
  ThreadExit,  // open when its thread exited
  TraceEnd,    // open at the end of the recording
  Gap,         // open where events of its thread were lost (its end is unknown)
  Exec,        // open when its thread's process exec'd another program
  Untimed,     // its return could not be seen (ClosedCall::untimed says why): no duration
};
// What the profile counts as `unfinished`.
inline bool unfinished(CallEnd e) {
  return e == CallEnd::ThreadExit || e == CallEnd::TraceEnd || e == CallEnd::Gap ||
         e == CallEnd::Exec;
}
// Whether the call has a duration (every view leaves untimed calls' out).
inline bool timed(CallEnd e) { return e != CallEnd::Untimed; }

// Why a call has no duration.
enum class UntimedReason : uint8_t {
  None = 0,
  NestingLimit = 1,  // past the kernel's 64 nested return probes of a thread
  StackSwitch = 2,   // its thread switched stacks (swapcontext): its return is not seen
  GivenBack = 3,     // its return address was given back to a stack walk (the fast path)
};
// Its words in reports ("not timed: ...").
const char* untimed_text(UntimedReason r);
// Its JSON/CSV name.
const char* to_string(UntimedReason r);
// The one place an event says a call's return will not be seen: the
// reason, or None. (A stack switch's UNWIND maps here.)
UntimedReason untimed_reason(const formats::Event& ev);

// An open call on a thread's stack.
struct OpenCall {
  uint32_t id = 0;    // probe id
  uint32_t slot = 0;  // dense number of the id (CallReplay::id_of_slot)
  uint64_t start = 0;
  uint64_t child_ns = 0;                // durations of the calls closed inside it
  KernelTimes kernel_at_entry;          // the thread's totals when it began
  KernelTimes self_kernel;              // gained while it was the innermost open call
  uint64_t nested_cost = 0;             // --compensate: probe cost of the calls nested in it
  std::vector<formats::ProbeArg> args;  // its entry's recorded arguments (record --args)
  UntimedReason untimed = UntimedReason::None;  // known to have no return to be seen
};

// A call that ended.
struct ClosedCall {
  uint32_t id = 0, slot = 0;
  size_t index = 0;             // its place on the stack when it closed (0: outermost)
  uint64_t start = 0, end = 0;  // end: the closing event's time (may precede start in a bad file)
  uint64_t dur = 0;             // end - start (0 if negative), compensated when asked
  uint64_t self_ns = 0;         // dur minus its callees' (clamped at 0)
  KernelTimes kernel;           // inclusive
  KernelTimes self_kernel;      // while innermost
  bool outermost = true;        // no other activation of its function open below it
  CallEnd how = CallEnd::Returned;
  UntimedReason untimed = UntimedReason::None;  // how == Untimed: why
  // What record --args/--retval recorded: its entry's arguments, and the
  // return value of the exit it returned by (empty: none recorded).
  const std::vector<formats::ProbeArg>* args = nullptr;
  const std::vector<formats::ProbeArg>* ret = nullptr;
};

// One thread as the replay knows it.
struct ReplayThread {
  uint32_t tid = 0;
  uint32_t pid = 0;     // of its last event
  uint16_t host = 0;    // a merged trace's recording (Event::host)
  uint32_t index = 0;   // dense thread number, in order of first event
  uint64_t events = 0;  // events of this thread seen so far
  uint64_t first_ts = 0;
  uint64_t last_ts = 0;  // its latest event's time
  std::string comm;      // its last Comm event's name ("" if none)
  // The CPUs its events were recorded on (index = CPU): the kernel counts
  // lost events per CPU, so a thread that ran where events were lost may
  // lack some of its own (ProfileBuilder marks it partial).
  std::vector<bool> cpus;
  // Its Gap events and the events they say were lost: the recorder knows
  // this thread lacks events, and where.
  uint64_t gaps = 0, lost = 0;
  std::vector<OpenCall> stack;
  std::vector<uint32_t> active;  // slot -> open activations (recursion)
  KernelTracker kernel;
};

// What the replay tells; every callback does nothing unless overridden.
class ReplayListener {
 public:
  virtual ~ReplayListener() = default;
  // A call began: it is the thread's stack's last.
  virtual void on_call_begin(const ReplayThread&, const OpenCall&) {}
  // A call ended: it is already off its thread's stack.
  virtual void on_call_end(const ReplayThread&, const ClosedCall&) {}
  // A kernel interval of the thread opened or closed.
  virtual void on_interval_open(const ReplayThread&, const KernelInterval&) {}
  virtual void on_interval_close(const ReplayThread&, const KernelInterval&, const IntervalClose&) {
  }
  // A system call ended (or was closed for want of its exit); its key is
  // the slot + 1 of the innermost call open when it began (0: none).
  virtual void on_syscall(const ClosedSyscall&) {}
  // After the event was applied; the thread is nullptr for DETACH events.
  virtual void on_event(const formats::Event&, const ReplayThread*) {}
};

class CallReplay {
 public:
  // The probe table (copied) gives compensation each probe's path.
  explicit CallReplay(const std::vector<formats::ProbeInfo>& probes);
  CallReplay(const CallReplay&) = delete;
  CallReplay& operator=(const CallReplay&) = delete;

  // Before the first add(): durations without the probes' cost (all 0:
  // none taken out).
  void compensate(const ProbeCosts& costs) { costs_ = costs; }
  // Listeners are told in the order they were added; they must outlive it.
  void listen(ReplayListener& l) { listeners_.push_back(&l); }

  // Events in time order per thread (TraceReader::next's order).
  void add(const formats::Event& ev);
  // Closes what is open at `end_ts` (or the last event's time if later;
  // 0: unknown), thread by thread in tid order. Call once.
  void finish(uint64_t end_ts);

  uint64_t end_ts() const { return end_; }  // after finish()
  uint64_t orphan_exits() const { return orphan_exits_; }
  const CompensationResidual& compensation() const { return residual_; }
  uint32_t id_of_slot(uint32_t slot) const { return slot_ids_[slot]; }
  // Every thread seen, by formats::thread_key (host and tid).
  const std::map<uint64_t, ReplayThread>& threads() const { return threads_; }

 private:
  // Reports the thread's kernel intervals to the listeners.
  struct Forward : IntervalSink {
    CallReplay* replay = nullptr;
    ReplayThread* owner = nullptr;
    void opened(const KernelInterval& i) override;
    void closed(const KernelInterval& i, const IntervalClose& c) override;
  };
  uint32_t slot_of(uint32_t id);
  ReplayThread& thread(const formats::Event& ev);
  void kernel_event(ReplayThread& t, const formats::Event& ev);
  void user_code(ReplayThread& t, uint64_t ts);
  void syscall(const std::optional<ClosedSyscall>& c);
  void add_self_kernel(ReplayThread& t, const KernelTimes& before);
  // Frame `index` of `t` (the innermost but for an unwound call) ends at `ts`.
  // `ret`: the values of the exit it returned by.
  void close(ReplayThread& t, size_t index, uint64_t ts, CallEnd how,
             const std::vector<formats::ProbeArg>* ret = nullptr);
  void close_top(ReplayThread& t, uint64_t ts, CallEnd how,
                 const std::vector<formats::ProbeArg>* ret = nullptr) {
    close(t, t.stack.size() - 1, ts, how, ret);
  }
  // The innermost open call of `slot` on `t`, if any.
  std::optional<size_t> find(const ReplayThread& t, uint32_t slot) const;
  // The open call of `slot` on `t` entered at `start`, if any.
  std::optional<size_t> find_started(const ReplayThread& t, uint32_t slot, uint64_t start) const;
  // Closes every call above `index` (left without their exit) at `ts`.
  void close_above(ReplayThread& t, size_t index, uint64_t ts);
  // A call still open where its end is unknown: Untimed if it is known to
  // have no return, else `how`.
  void close_open(ReplayThread& t, uint64_t ts, CallEnd how);
  // A child process's copy of the forking thread's open calls.
  void inherit(const ReplayThread& parent, const formats::Event& fork);
  // An exit of `t` with no open call of `slot`: its copy of its parent's
  // calls up to the innermost of `slot` become its calls; false if none.
  bool take_inherited(ReplayThread& t, uint32_t slot, uint64_t ts);
  uint64_t compensated(OpenCall* caller, const OpenCall& f, uint64_t dur);

  std::vector<ReplayListener*> listeners_;
  std::unordered_map<uint32_t, formats::ProbePath> paths_;
  // Functions are numbered densely (slots), not kept in maps: a report
  // reads tens of millions of events and a map insert/erase per call
  // dominated its time.
  std::vector<uint32_t> dense_slot_;                    // id -> slot + 1 (0: none yet)
  std::unordered_map<uint32_t, uint32_t> sparse_slot_;  // ids beyond dense_slot_
  std::vector<uint32_t> slot_ids_;                      // slot -> id
  // Threads by formats::thread_key: tids repeat across a merged trace's hosts.
  std::map<uint64_t, ReplayThread> threads_;  // node-based: addresses stay
  std::map<uint64_t, Forward> forwards_;      // thread -> its interval sink
  // A forked child's thread -> the forking thread's open calls at the fork
  // (inherit), until the child returns from one or execs.
  std::unordered_map<uint64_t, std::vector<OpenCall>> inherited_;
  uint64_t last_tid_ = 0;
  ReplayThread* last_thread_ = nullptr;
  uint64_t last_ts_ = 0, end_ = 0, orphan_exits_ = 0;
  ProbeCosts costs_;
  struct SlotCost {
    uint64_t whole, inside;
  };
  std::vector<SlotCost> slot_cost_;  // slot -> its probes' costs (filled lazily)
  CompensationResidual residual_;
};

}  // namespace atrace::analysis
