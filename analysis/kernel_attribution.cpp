// KernelTracker: the off-CPU and system-call intervals of one thread. The
// repairs for lost events (an interval closed by the next sign of the thread
// running) keep intervals from swallowing the rest of the recording when
// their closing event found a full ring buffer.
#include "analysis/kernel_attribution.h"

namespace atrace::analysis {

namespace {
// The system calls through which the kernel runs atrace's own probes on
// x86-64 (Linux 6.11+: every return probe; 6.17+: optimized entry probes,
// kernel-notes/uretprobe-syscall.md). The function event happens inside
// them, so they would break the rule that no interval is open at function
// events, and they are the tracer's cost, not the program's: not counted.
// Their exit carries number -1 and, without an entry, is ignored.
constexpr uint64_t kUretprobeNr = 335, kUprobeNr = 336;
}  // namespace

void KernelTracker::running(uint64_t ts) {
  if (off()) end_offcpu(ts, IntervalEnd::Repaired);
  state_ &= static_cast<uint8_t>(~kExited);  // a tid seen running after its exit was reused
}

std::optional<ClosedSyscall> KernelTracker::user_code(uint64_t ts) {
  running(ts);
  return in_syscall() ? end_syscall({ts, IntervalEnd::Repaired}, false) : std::nullopt;
}

void KernelTracker::end_offcpu(uint64_t ts, IntervalEnd how) {
  uint64_t ns = ts > off_since_ ? ts - off_since_ : 0;
  (off_state_ != 0 ? totals_.offcpu_blocked_ns : totals_.offcpu_runnable_ns) += ns;
  state_ &= static_cast<uint8_t>(~kOff);
  if (sink_)
    sink_->closed(KernelInterval{IntervalKind::OffCpu, off_since_, 0, off_state_}, {ts, how});
}

void KernelTracker::switch_out(uint64_t ts, uint8_t prev_state) {
  // The switch after the thread's exit (state TASK_DEAD) is not off-CPU
  // time of a live thread.
  if (exited()) return;
  // A switch out while already out: the SwitchIn in between was lost.
  if (off()) end_offcpu(ts, IntervalEnd::Repaired);
  state_ |= kOff;
  off_state_ = prev_state;
  off_since_ = ts;
  if (sink_) sink_->opened(KernelInterval{IntervalKind::OffCpu, ts, 0, prev_state});
}

void KernelTracker::switch_in(uint64_t ts) {
  // Otherwise out since before the recording: ignored.
  if (off()) end_offcpu(ts, IntervalEnd::Closed);
}

void KernelTracker::fault(uint64_t ts) {
  running(ts);
  totals_.faults++;
}

std::optional<ClosedSyscall> KernelTracker::syscall_enter(uint64_t ts, uint64_t nr, uint32_t key) {
  running(ts);
  std::optional<ClosedSyscall> lost_exit;
  if (in_syscall()) lost_exit = end_syscall({ts, IntervalEnd::Repaired}, false);
  if (nr == kUretprobeNr || nr == kUprobeNr) return lost_exit;
  state_ |= kInSyscall;
  sys_since_ = ts;
  sys_nr_ = nr;
  sys_key_ = key;
  // Counted at entry, so the call belongs to the functions open then even
  // if its exit is never seen.
  totals_.syscalls++;
  if (sink_) sink_->opened(KernelInterval{IntervalKind::Syscall, ts, nr, 0});
  return lost_exit;
}

std::optional<ClosedSyscall> KernelTracker::syscall_exit(uint64_t ts, uint64_t nr, int64_t ret) {
  running(ts);
  if (!in_syscall()) return std::nullopt;  // entered before the recording: ignored
  // An exit numbered otherwise (-1: rt_sigreturn, which returns the
  // interrupted code's register) does not return an errno.
  return end_syscall({ts, IntervalEnd::Closed, true, ret},
                     nr == sys_nr_ && ret >= -4095 && ret <= -1);
}

std::optional<ClosedSyscall> KernelTracker::end_syscall(const IntervalClose& c, bool error) {
  uint64_t ns = c.ts > sys_since_ ? c.ts - sys_since_ : 0;
  totals_.syscall_ns += ns;
  state_ &= static_cast<uint8_t>(~kInSyscall);
  if (sink_) sink_->closed(KernelInterval{IntervalKind::Syscall, sys_since_, sys_nr_, 0}, c);
  return ClosedSyscall{sys_key_, sys_nr_, ns, error};
}

std::optional<ClosedSyscall> KernelTracker::exit(uint64_t ts) {
  auto open_call = close_all(ts, IntervalEnd::ThreadExit);
  state_ |= kExited;
  exit_ts_ = ts;
  return open_call;
}

std::optional<ClosedSyscall> KernelTracker::finish(uint64_t ts) {
  return close_all(ts, IntervalEnd::TraceEnd);
}

std::optional<ClosedSyscall> KernelTracker::close_all(uint64_t ts, IntervalEnd how) {
  if (off()) end_offcpu(ts, how);
  return in_syscall() ? end_syscall({ts, how}, false) : std::nullopt;
}

}  // namespace atrace::analysis
