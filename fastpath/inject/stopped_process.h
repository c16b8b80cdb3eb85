// Every thread of a running process stopped by ptrace, for as long as this
// object lives (RAII): the one state in which atrace may run system calls
// in the process (remote_syscall.h) and replace its code (code_patch.h).
//
// Stopping: PTRACE_SEIZE and PTRACE_INTERRUPT of each thread of
// /proc/PID/task, repeated until a listing shows no thread not yet stopped
// (a thread can only be created by a running one), then a wait for each
// stop. No PTRACE_O_EXITKILL and no other option: when atrace dies, the
// kernel detaches every thread and the program runs on as if nothing
// happened. No signal is lost or delivered twice: a thread that was about to
// take a signal when it was interrupted reports a signal-delivery-stop
// first; it is continued with that signal (its handler's frame is set up,
// as without atrace) and stops before its first user instruction, because
// the interrupt is still pending. Signals sent during the stop stay pending
// in the kernel (a stopped tracee takes none) and are delivered after
// release. A thread stopped inside a blocking system call (read, futex,
// nanosleep) stops with the kernel's restart code in rax (-ERESTARTSYS,
// -ERESTART_RESTARTBLOCK ...) and the call number in orig_rax; as long as
// those registers are given back unchanged, the kernel restarts the call on
// release exactly as after any signal (remote_syscall.cpp keeps them). The
// few calls that fail with EINTR on a stop instead (epoll_wait, semop ...)
// are made to restart the same way (restart_if_interrupted).
//
// Release: PTRACE_DETACH of every thread, each with signal 0 (the only
// stops left are interrupt stops and remote_syscall's own SIGTRAP).
//
// Ptrace requests are only accepted from the thread that seized the
// process, so every method must be called from the thread that made this
// object (checked). A process traced by anyone else (gdb, strace, another
// atrace) is refused with a clear InjectError (AlreadyTraced). One that
// atrace's calling thread traces already (a launched command followed
// through its forks with --follow-forks, record/exec_follow.h) is stopped
// through its tracer (tracer.h): interrupted, not seized; continued, not
// detached; the wait statuses that are not the stop's (a fork event,
// another followed process's exec) handed to the tracer.
#pragma once

#include <sys/types.h>
#include <sys/user.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "fastpath/inject/inject_error.h"
#include "fastpath/inject/tracer.h"

namespace atrace::fastpath {

// The process is already ptraced (gdb, strace, atrace following execs).
class AlreadyTraced : public InjectError {
 public:
  using InjectError::InjectError;
};

struct StoppedThread {
  pid_t tid = 0;
  user_regs_struct regs{};  // as stopped: rip, rsp, fs_base (its thread pointer) ...
  // Stopped in a system call the kernel restarts on release: it resumes at
  // rip - 2 (the syscall instruction), not at rip.
  bool restarting_syscall() const;
};

struct StopTimes {
  std::chrono::nanoseconds to_stop{0};  // first interrupt to every thread stopped
  std::chrono::nanoseconds held{0};     // first interrupt to the last thread let go (0 while held)
  std::chrono::nanoseconds detach{0};   // release: the first thread let go to the last
  unsigned signals_passed = 0;          // signals delivered on the way (see above)
  unsigned rounds = 0;                  // /proc/PID/task listings needed
  unsigned calls_restarted = 0;         // blocking calls the stop made fail with EINTR, restarted
};

class StoppedProcess {
 public:
  // Stops every thread of `pid`. Throws AlreadyTraced, ProcessGone, or
  // InjectError (permission, or a thread that does not stop within 5 s).
  // `tracer`: the calling thread traces the process already (tracer.h).
  explicit StoppedProcess(pid_t pid, Tracer* tracer = nullptr);
  // The same for a process whose thread `held` the calling thread already
  // holds in an interrupt stop (PTRACE_SEIZE, then PTRACE_EVENT_STOP): it
  // becomes one of this object's threads, released with them (with a
  // tracer: the tracer's from here on).
  StoppedProcess(pid_t pid, pid_t held, Tracer* tracer = nullptr);
  StoppedProcess(const StoppedProcess&) = delete;
  StoppedProcess& operator=(const StoppedProcess&) = delete;
  ~StoppedProcess();  // release()

  pid_t pid() const { return pid_; }
  bool held() const { return held_; }
  const std::vector<StoppedThread>& threads() const { return threads_; }
  // The thread with this tid (InjectError when it is not one of them).
  StoppedThread& thread(pid_t tid);
  // Re-reads a thread's registers (after a remote system call ran in it).
  void refresh(StoppedThread& thread);
  StopTimes times() const { return times_; }

  // Runs one instruction of `thread`, the others held (PTRACE_SINGLESTEP),
  // and re-reads its registers. A signal that arrives meanwhile is given
  // to the thread with the next step, as the kernel would have given it.
  // False when the thread is gone; false, not stepped, when it is in or at
  // a system call, which may wait for a held thread (a lock a C++ throw's
  // unwinder takes, pthread_join); false when the step still did not end
  // within kStepWait: the thread is stopped again where it is
  // (PTRACE_INTERRUPT), its registers re-read.
  static constexpr std::chrono::milliseconds kStepWait{50};
  bool step(StoppedThread& thread);
  // Lets every thread go on (idempotent, never throws).
  void release() noexcept;
  // release(), let the process run for `run`, stop it again (the thread
  // list and registers are new). For a patch that must wait until no thread
  // is inside the bytes it replaces.
  void restop(std::chrono::microseconds run);

 private:
  void stop_all();
  bool take_thread(pid_t tid);
  enum class Waited { Stopped, Gone };
  Waited wait_for_stop(pid_t tid);
  std::optional<int> wait_thread(pid_t tid, std::chrono::milliseconds timeout);
  void let_go(pid_t tid) noexcept;
  void restart_if_interrupted(StoppedThread& thread);
  void check_thread() const;

  // The calling thread's nice value at -20 while it holds the process.
  class Boost {
   public:
    Boost();
    ~Boost();
    Boost(const Boost&) = delete;
    Boost& operator=(const Boost&) = delete;

   private:
    int old_;
    bool raised_;
  };

  pid_t pid_;
  pid_t owner_;        // the thread whose ptrace requests the kernel accepts
  pid_t adopted_ = 0;  // held already by the caller (first stop only)
  Tracer* tracer_;     // the calling thread traces the process already, or null
  // With a tracer: statuses waited for one thread that were another's of
  // this stop, and the threads stopped in a group-stop (SIGSTOP ...),
  // which go back to it (PTRACE_LISTEN), not on.
  std::map<pid_t, int> early_;
  std::set<pid_t> group_stopped_;
  bool held_ = false;
  std::vector<StoppedThread> threads_;
  std::chrono::steady_clock::time_point start_;
  StopTimes times_;
  std::optional<Boost> boost_;
};

}  // namespace atrace::fastpath
