#include "fastpath/inject/remote_syscall.h"

#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <string>

#include "fastpath/inject/as_pointer.h"
#include "fastpath/inject/ptrace_wait.h"

namespace atrace::fastpath {

namespace {

constexpr std::array<std::byte, 3> kStub{std::byte{0x0f}, std::byte{0x05}, std::byte{0xcc}};

long trace(__ptrace_request request, pid_t tid, void* addr, void* data) {
  return ptrace(request, tid, addr, data);
}

pid_t pick_thread(StoppedProcess& process, pid_t tid) {
  if (tid != 0) return process.thread(tid).tid;
  for (const StoppedThread& t : process.threads())
    if (t.tid == process.pid()) return t.tid;
  return process.threads().front().tid;
}

// A thread under seccomp (strict mode, or a filter whose action for mmap
// or prctl may be to kill: systemd's SystemCallFilter=, sandboxes) could
// be killed by the very call atrace runs in it; the filter cannot be
// judged from outside without CAP_SYS_ADMIN's PTRACE_SECCOMP_GET_FILTER and
// a BPF interpreter, so such a thread is refused.
void check_no_seccomp(pid_t pid, pid_t tid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Seccomp:", 0) != 0) continue;
    if (std::atoi(line.c_str() + 8) != 0)
      throw InjectError("thread " + std::to_string(tid) + " of process " + std::to_string(pid) +
                        " runs under seccomp: a system call atrace ran in it could kill it");
    return;
  }
}

void put_sigmask(pid_t tid, uint64_t mask) {
  if (trace(PTRACE_SETSIGMASK, tid, as_pointer(sizeof mask), &mask) < 0)
    throw InjectError(
        errno_message("cannot set the signal mask of thread " + std::to_string(tid), errno));
}

// From the int3's SIGTRAP stop to an interrupt stop: the SIGTRAP is
// dropped (continued with signal 0) and the pending interrupt stops the
// thread before it returns to user space, so the registers just restored
// (and the kernel's restart of a call it was stopped in) wait for release.
void settle(pid_t pid, pid_t tid, const std::string& who) {
  if (trace(PTRACE_INTERRUPT, tid, nullptr, nullptr) < 0 ||
      trace(PTRACE_CONT, tid, nullptr, nullptr) < 0)
    throw ProcessGone(errno_message("cannot stop " + who + " again", errno));
  for (unsigned stops = 0; stops < 16; ++stops) {
    std::optional<int> status = wait_traced(pid, tid, std::chrono::seconds(5));
    if (!status || WIFEXITED(*status) || WIFSIGNALED(*status)) throw ProcessGone(who + " ended");
    if (!WIFSTOPPED(*status)) continue;
    if ((*status >> 16) == PTRACE_EVENT_STOP) return;
    // Only an unblockable signal can come here: delivered as it would have been.
    trace(PTRACE_CONT, tid, nullptr, as_pointer(static_cast<uint64_t>(WSTOPSIG(*status))));
  }
  throw InjectError(who + " did not stop again after a system call atrace ran in it");
}

}  // namespace

RemoteSyscall::RemoteSyscall(StoppedProcess& process, pid_t tid)
    : process_(process), tid_(pick_thread(process, tid)), memory_(process.pid()) {
  check_no_seccomp(process.pid(), tid_);
}

long RemoteSyscall::call(long nr, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5,
                         uint64_t a6) {
  if (!process_.held()) throw InjectError("remote system call in a process that is not stopped");
  StoppedThread& thread = process_.thread(tid_);
  process_.refresh(thread);
  const user_regs_struct saved = thread.regs;
  const uint64_t at = saved.rip;
  const std::string who =
      "thread " + std::to_string(tid_) + " of process " + std::to_string(process_.pid());

  uint64_t mask = 0;
  if (trace(PTRACE_GETSIGMASK, tid_, as_pointer(sizeof mask), &mask) < 0)
    throw InjectError(errno_message("cannot read the signal mask of " + who, errno));
  std::array<std::byte, kStub.size()> original{};
  memory_.read_any(at, original);

  // Puts everything back, on the error path too as far as the thread
  // lives, and leaves the thread in an interrupt stop again: the int3 left
  // it in a SIGTRAP signal-delivery-stop, which, were atrace killed, the
  // kernel would end by delivering the SIGTRAP (the program's death); an
  // interrupt stop it ends by just letting the thread go on.
  auto restore = [&] {
    memory_.write_any(at, original);
    if (trace(PTRACE_SETREGS, tid_, nullptr, const_cast<user_regs_struct*>(&saved)) < 0)
      throw ProcessGone(errno_message("cannot restore the registers of " + who, errno));
    thread.regs = saved;
    settle(process_.pid(), tid_, who);
    put_sigmask(tid_, mask);
  };

  user_regs_struct regs = saved;
  regs.rax = static_cast<uint64_t>(nr);
  regs.orig_rax = ~uint64_t{0};
  regs.rdi = a1;
  regs.rsi = a2;
  regs.rdx = a3;
  regs.r10 = a4;
  regs.r8 = a5;
  regs.r9 = a6;
  regs.rip = at;
  long result = 0;
  try {
    put_sigmask(tid_, ~uint64_t{0} & ~(uint64_t{1} << (SIGTRAP - 1)));
    memory_.write_any(at, kStub);
    if (trace(PTRACE_SETREGS, tid_, nullptr, &regs) < 0 ||
        trace(PTRACE_CONT, tid_, nullptr, nullptr) < 0)
      throw ProcessGone(errno_message("cannot run a system call in " + who, errno));
    for (unsigned stops = 0;; ++stops) {
      std::optional<int> status = wait_traced(process_.pid(), tid_, std::chrono::seconds(5));
      if (!status || WIFEXITED(*status) || WIFSIGNALED(*status))
        throw ProcessGone(who + " ended during a system call atrace ran in it");
      if (!WIFSTOPPED(*status)) continue;
      int event = *status >> 16;
      int sig = WSTOPSIG(*status);
      if (event == 0 && sig == SIGTRAP) {
        user_regs_struct now{};
        trace(PTRACE_GETREGS, tid_, nullptr, &now);
        if (now.rip == at + kStub.size()) {
          result = static_cast<long>(now.rax);
          break;
        }
      }
      if (stops > 16) throw InjectError("a system call run in " + who + " did not come back");
      // Only SIGKILL (which ends everything), SIGSTOP and a SIGTRAP someone
      // sent can come here: delivered as they would have been; a job-control
      // stop (event) is continued, the other threads keep it.
      trace(PTRACE_CONT, tid_, nullptr, as_pointer(static_cast<uint64_t>(event == 0 ? sig : 0)));
    }
  } catch (...) {
    try {
      restore();
    } catch (const InjectError&) {
      // The thread or process is gone: nothing left to restore.
    }
    throw;
  }
  restore();
  return result;
}

uint64_t RemoteSyscall::checked(const char* what, long nr, uint64_t a1, uint64_t a2, uint64_t a3,
                                uint64_t a4, uint64_t a5, uint64_t a6) {
  long r = call(nr, a1, a2, a3, a4, a5, a6);
  if (r < 0 && r > -4096)
    throw InjectError(errno_message(
        std::string(what) + " in process " + std::to_string(process_.pid()), static_cast<int>(-r)));
  return static_cast<uint64_t>(r);
}

}  // namespace atrace::fastpath
