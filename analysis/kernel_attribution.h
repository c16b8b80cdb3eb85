// What the kernel did to one thread, from its kernel events: time switched
// out (blocked or waiting for a CPU), time inside system calls, system calls
// made, page faults taken. The profile attributes these to function calls.
//
//   KernelTimes     the five numbers, as running totals or as differences
//   ClosedSyscall   one finished system call, for the per-function table
//   KernelTracker   one thread's open off-CPU interval and open system call
//
// How attribution works: each thread keeps running totals; a call's
// inclusive share is the totals at its exit minus the totals at its entry,
// its self share what the totals gained while it was the innermost open
// call (CallReplay::add_self_kernel). This is exact
// because no interval is open while a function enters or exits: a thread
// that is switched out or inside a system call runs no user code, so the
// uprobes cannot fire then (except inside the system calls that run them,
// which are not counted: kernel_attribution.cpp). An event that shows the
// thread running while an interval is open means its closing event was
// lost; the interval is closed at that event (KernelTracker::running),
// keeping the invariant.
//
// Off-CPU time and system call time overlap by design: a read() that blocks
// counts in both.
#pragma once

#include <cstdint>
#include <optional>

namespace atrace::analysis {

struct KernelTimes {
  uint64_t offcpu_blocked_ns = 0;   // switched out asleep (I/O, lock, sleep)
  uint64_t offcpu_runnable_ns = 0;  // switched out while still runnable (preempted)
  uint64_t syscall_ns = 0;          // inside system calls, blocked time included
  uint64_t syscalls = 0;
  uint64_t faults = 0;  // user page faults, minor and major

  uint64_t offcpu_ns() const { return offcpu_blocked_ns + offcpu_runnable_ns; }
  KernelTimes& operator+=(const KernelTimes& o) {
    offcpu_blocked_ns += o.offcpu_blocked_ns;
    offcpu_runnable_ns += o.offcpu_runnable_ns;
    syscall_ns += o.syscall_ns;
    syscalls += o.syscalls;
    faults += o.faults;
    return *this;
  }
  // Only for a later total minus an earlier one of the same thread (or a
  // sum of nested parts of it): every field is monotonic, so never negative.
  KernelTimes& operator-=(const KernelTimes& o) {
    offcpu_blocked_ns -= o.offcpu_blocked_ns;
    offcpu_runnable_ns -= o.offcpu_runnable_ns;
    syscall_ns -= o.syscall_ns;
    syscalls -= o.syscalls;
    faults -= o.faults;
    return *this;
  }
  friend KernelTimes operator-(KernelTimes a, const KernelTimes& b) { return a -= b; }
  bool operator==(const KernelTimes&) const = default;
};

// The intervals themselves, for the views that draw them (the timeline):
// a KernelTracker given an IntervalSink reports each one as it opens and
// closes, and how it closed.
enum class IntervalKind : uint8_t { OffCpu, Syscall };
enum class IntervalEnd : uint8_t {
  Closed,      // by its own closing event (switch-in, system call exit)
  Repaired,    // its closing event was lost: closed when the thread ran again
  ThreadExit,  // open when the thread exited (exit, exit_group never return)
  TraceEnd,    // open at the end of the recording
};
struct KernelInterval {
  IntervalKind kind = IntervalKind::OffCpu;
  uint64_t start = 0;
  uint64_t nr = 0;    // Syscall: the number entered
  uint8_t state = 0;  // OffCpu: prev_state (formats::kSwitchRunnable: preempted)
};
struct IntervalClose {
  uint64_t ts = 0;
  IntervalEnd how = IntervalEnd::Closed;
  bool has_ret = false;  // Syscall closed by its exit: the return value
  int64_t ret = 0;
};
class IntervalSink {
 public:
  virtual ~IntervalSink() = default;
  virtual void opened(const KernelInterval& i) = 0;
  // An off-CPU period inside a system call closes first.
  virtual void closed(const KernelInterval& i, const IntervalClose& c) = 0;
};

// A system call that ended (or was closed for want of its exit).
struct ClosedSyscall {
  uint32_t key = 0;  // who issued it: innermost open function's slot + 1, 0 none
  uint64_t nr = 0;
  uint64_t ns = 0;
  bool error = false;  // returned -4095..-1 (an errno)
};

// One thread's kernel state, fed its kernel events in time order. Intervals
// whose start was not recorded (a SwitchIn or SyscallExit first) are
// ignored. After the thread's exit, scheduler events (its final switch out)
// are ignored until it shows signs of running again (a reused tid).
class KernelTracker {
 public:
  // Where to report intervals (nullptr: nowhere, the default).
  void report_to(IntervalSink* sink) { sink_ = sink; }
  // Totals of the closed intervals. Between function events no interval is
  // open, so these are the exact totals there (see the file comment).
  const KernelTimes& totals() const { return totals_; }
  // True while user_code() has something to do (an interval is open, or
  // the thread had exited): the one test on the hot path of function events.
  bool pending() const { return state_ != 0; }

  // The thread runs at `ts` (it made a user-space event: function entry or
  // exit, system call, fault): an off-CPU interval still open lost its
  // SwitchIn and ends here.
  void running(uint64_t ts);
  // A function event: running, and a system call still open lost its exit
  // (no uprobe fires inside a system call), so it ends here too.
  std::optional<ClosedSyscall> user_code(uint64_t ts);

  void switch_out(uint64_t ts, uint8_t prev_state);
  void switch_in(uint64_t ts);
  void fault(uint64_t ts);
  // `key` names the innermost open function. A system call still open lost
  // its exit: it ends here and is returned.
  std::optional<ClosedSyscall> syscall_enter(uint64_t ts, uint64_t nr, uint32_t key);
  // An error is a return of -4095..-1 from an exit with the entry's number.
  std::optional<ClosedSyscall> syscall_exit(uint64_t ts, uint64_t nr, int64_t ret);
  // ThreadExit / ProcExit: closes both intervals (exit and exit_group never
  // return) and remembers the time, the end of the thread's span.
  std::optional<ClosedSyscall> exit(uint64_t ts);
  // End of the recording: closes what is still open at `ts`.
  std::optional<ClosedSyscall> finish(uint64_t ts);

  bool exited() const { return state_ & kExited; }
  uint64_t exit_ts() const { return exit_ts_; }

 private:
  void end_offcpu(uint64_t ts, IntervalEnd how);
  std::optional<ClosedSyscall> end_syscall(const IntervalClose& c, bool error);
  std::optional<ClosedSyscall> close_all(uint64_t ts, IntervalEnd how);

  // state_ bits: one byte, so that pending() is a single test.
  static constexpr uint8_t kOff = 1, kInSyscall = 2, kExited = 4;
  bool off() const { return state_ & kOff; }
  bool in_syscall() const { return state_ & kInSyscall; }

  KernelTimes totals_;
  uint8_t state_ = 0;
  uint8_t off_state_ = 0;  // prev_state of the open off-CPU interval
  uint32_t sys_key_ = 0;
  uint64_t off_since_ = 0;
  uint64_t sys_since_ = 0, sys_nr_ = 0;
  uint64_t exit_ts_ = 0;
  IntervalSink* sink_ = nullptr;
};

}  // namespace atrace::analysis
