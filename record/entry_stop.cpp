#include "record/entry_stop.h"

#include <elf.h>
#include <poll.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>

#include "base/diagnostics.h"
#include "fastpath/inject/as_pointer.h"
#include "fastpath/inject/stopped_process.h"
#include "record/stop_signals.h"
#include "record/target.h"

namespace atrace {

namespace {

long trace(__ptrace_request request, pid_t pid, uint64_t addr = 0, uint64_t data = 0) {
  return ptrace(request, pid, fastpath::as_pointer(addr), fastpath::as_pointer(data));
}

constexpr uint64_t debugreg(int n) {
  return offsetof(struct user, u_debugreg) + static_cast<uint64_t>(n) * sizeof(long);
}
// DR7: local enable of breakpoint 0; its R/W and LEN bits 0: on execution
// of the instruction at DR0.
constexpr uint64_t kDr7Exec0 = 1;

uint64_t auxv_entry(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/auxv", std::ios::binary);
  Elf64_auxv_t a{};
  while (in.read(reinterpret_cast<char*>(&a), sizeof a))
    if (a.a_type == AT_ENTRY) return a.a_un.a_val;
  return 0;
}

std::string describe(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("was killed by ") + strsignal(WTERMSIG(status));
  return "ended";
}

bool is_stop_signal(int sig) {
  return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

}  // namespace

EntryStop::EntryStop(pid_t pid, bool die_with_atrace)
    : pid_(pid), die_with_atrace_(die_with_atrace) {
  // Exec events stay reported (an exec before the entry is an error, not a
  // silent run past it); the rest of the follower's options go until
  // stopped() (a process a library constructor forks is not followed).
  const uint64_t options = PTRACE_O_TRACEEXEC | (die_with_atrace ? PTRACE_O_EXITKILL : 0);
  if (trace(PTRACE_SETOPTIONS, pid_, 0, options) != 0) {
    handed_over_ = true;  // nothing of ours to undo
    throw TargetError("cannot hold the command at its entry point: ptrace: " +
                      base::errno_text(errno));
  }
}

EntryStop::~EntryStop() {
  if (handed_over_) return;
  if (!die_with_atrace_) {
    // It runs on untraced, from where it is, the breakpoint gone: held
    // first if it runs (a breakpoint's trap on the way is not delivered).
    auto let_go = [this] {
      return trace(PTRACE_POKEUSER, pid_, debugreg(7), 0) == 0 &&
             trace(PTRACE_DETACH, pid_, 0, 0) == 0;
    };
    if (let_go() || trace(PTRACE_INTERRUPT, pid_) != 0) return;
    for (;;) {
      int status = 0;
      const pid_t got = waitpid(pid_, &status, __WALL);
      if (got < 0 && errno == EINTR) continue;
      if (got != pid_ || !WIFSTOPPED(status)) return;  // gone
      if ((status >> 16) == PTRACE_EVENT_STOP) break;
      const int sig = WSTOPSIG(status);
      trace(PTRACE_CONT, pid_, 0, (status >> 16) == 0 && sig != SIGTRAP ? sig : 0);
    }
    let_go();
    return;
  }
  // Killed while traced and stopped: its end waits for its parent, the
  // Target, which reaps it.
  kill(pid_, SIGKILL);
}

void EntryStop::run(StopSignals& stop) {
  entry_ = auxv_entry(pid_);
  if (!entry_) throw TargetError("the command has no entry point in /proc/PID/auxv");
  if (trace(PTRACE_POKEUSER, pid_, debugreg(0), entry_) != 0 ||
      trace(PTRACE_POKEUSER, pid_, debugreg(7), kDr7Exec0) != 0)
    throw TargetError("cannot put a breakpoint on the command's entry point: ptrace: " +
                      base::errno_text(errno));
  unsigned long resume = 0;
  bool listening = false;
  for (;;) {
    if (!std::exchange(listening, false) && trace(PTRACE_CONT, pid_, 0, resume) != 0 &&
        errno != ESRCH)
      throw TargetError("cannot run the command to its entry point: ptrace: " +
                        base::errno_text(errno));
    int status = 0;
    pid_t got = 0;
    // Short polls: a stop signal for atrace ends the wait (a constructor
    // that blocks forever must not hold atrace with it).
    while ((got = waitpid(pid_, &status, __WALL | WNOHANG)) == 0) {
      if (const int sig = stop.take())
        throw RecordInterrupted(sig, std::string("interrupted by ") + stop_signal_name(sig) +
                                         " before the command reached its entry point: "
                                         "nothing recorded");
      struct pollfd p = {stop.fd(), POLLIN, 0};
      poll(&p, 1, 1);
    }
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 || WIFEXITED(status) || WIFSIGNALED(status)) {
      handed_over_ = true;  // gone: nothing to kill, its status is the Target's to report
      throw TargetError("the command " + (got < 0 ? std::string("ended") : describe(status)) +
                        " before its entry point (in ld.so or a library's constructor)");
    }
    const int sig = WSTOPSIG(status);
    const int event = status >> 16;
    resume = 0;
    if (event == PTRACE_EVENT_EXEC)
      throw TargetError("the command exec'd again before its entry point");
    if (event == PTRACE_EVENT_STOP) {
      // A group-stop (SIGSTOP ...): stopped as it would be untraced, until
      // a SIGCONT, which the next wait reports.
      if (is_stop_signal(sig)) listening = trace(PTRACE_LISTEN, pid_) == 0;
      continue;
    }
    if (event != 0) continue;
    if (sig == SIGTRAP) {
      user_regs_struct regs{};
      if (trace(PTRACE_GETREGS, pid_, 0, reinterpret_cast<uint64_t>(&regs)) == 0 &&
          regs.rip == entry_)
        break;
    }
    resume = static_cast<unsigned long>(sig);  // delivered as without atrace
  }
  // The breakpoint's SIGTRAP is not delivered: the interrupt stop replaces
  // the signal-delivery stop, before the entry's first instruction.
  trace(PTRACE_POKEUSER, pid_, debugreg(7), 0);
  trace(PTRACE_POKEUSER, pid_, debugreg(0), 0);
  trace(PTRACE_INTERRUPT, pid_);
  trace(PTRACE_CONT, pid_, 0, 0);
  for (;;) {
    int status = 0;
    const pid_t got = waitpid(pid_, &status, __WALL);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 || WIFEXITED(status) || WIFSIGNALED(status)) {
      handed_over_ = true;
      throw TargetError("the command ended at its entry point");
    }
    if ((status >> 16) == PTRACE_EVENT_STOP) break;
    // A signal that came meanwhile: delivered (its handler's frame set up);
    // the interrupt still pending stops it before the handler runs.
    const int sig = (status >> 16) == 0 ? WSTOPSIG(status) : 0;
    trace(PTRACE_CONT, pid_, 0, static_cast<uint64_t>(sig));
  }
}

std::unique_ptr<fastpath::StoppedProcess> EntryStop::stopped(fastpath::Tracer* tracer) {
  auto process = std::make_unique<fastpath::StoppedProcess>(pid_, pid_, tracer);
  handed_over_ = true;
  return process;
}

}  // namespace atrace
