// Launch mode when the command's own program matches none of the
// selectors: a shell script, a shim (pyenv's `python3`), `env`, a wrapper
// that execs the real program. The command runs under ptrace, stopped by
// the kernel after each exec (PTRACE_O_TRACEEXEC), and each program it
// execs is tried against the selectors, until one matches. That process
// (and, with --follow-forks, every other followed one) is then held where
// it is, the new program loaded but none of its instructions run, while
// the recorder sets up and attaches; release() lets them all go and ends
// the ptrace: the program that is traced is no longer ptraced, so it can
// be debugged and sees no tracer. With --follow-forks, keep_following()
// lets them go but stays their tracer to the end of the recording: each
// program one of them execs later is held just after its exec while the
// recorder probes it (whole process trees, docs/kernel-events.md).
//
// Why ptrace rather than a BPF program on sched_process_exec that stops
// the process with a signal: a ptrace stop is undone by the kernel when
// atrace dies (the tracee is detached and resumes), a SIGSTOP would leave
// the program stopped forever; and a ptrace stop is invisible to the
// process's parent, which a SIGSTOP is not (SIGCHLD, waitpid(WUNTRACED)).
// Signals sent to a followed process while it runs the wrapper are passed
// on unchanged.
#pragma once

#include <sys/types.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "fastpath/inject/tracer.h"

namespace atrace {

class StopSignals;
class ChildSignals;

struct ExecMatch {
  pid_t pid = -1;   // the process that exec'd it, stopped
  std::string exe;  // the program (/proc/PID/exe)
};

// The followed processes' tracer too for the fast path's stops
// (fastpath/inject/tracer.h): with --fast-path --follow-forks, atrace
// patches a process it follows without another tracer.
class ExecFollower : public fastpath::Tracer {
 public:
  // Takes the held target `top` (before Target::release(); TargetError
  // when the kernel refuses). With `forks`, its children are followed too
  // (the processes they fork before one execs a matching program).
  // `die_with_atrace`: PTRACE_O_EXITKILL, a killed atrace kills them too
  // rather than let them run on untraced (--fast-path's launch: the command
  // does not run without the recording it was started for, as the hold
  // pipe's rule says, record/target.h).
  ExecFollower(pid_t top, bool forks, bool die_with_atrace = false);
  ExecFollower(const ExecFollower&) = delete;
  ExecFollower& operator=(const ExecFollower&) = delete;
  ~ExecFollower() override;  // release(): no followed process is ever left stopped

  // Runs the command until `matches` is true for a program a followed
  // process exec'd (the process stopped at its exec, the program's path): every followed process is
  // then stopped, the matching one just after its exec. nullopt when every followed process ended
  // first (ran() says what they ran), or when a stop signal came (interrupted()).
  std::optional<ExecMatch> run(const std::function<bool(const ExecMatch&)>& matches,
                               StopSignals& stop);

  // The programs exec'd, each once, in order.
  const std::vector<std::string>& ran() const { return ran_; }
  int interrupted() const { return interrupted_; }
  // The followed processes alive, stopped after run() found a match.
  std::vector<pid_t> processes() const;
  // The top process's wait status when it ended while followed (it was
  // reaped here: Target::reaped()).
  std::optional<int> top_status() const { return top_status_; }

  // The matched process (stopped just after its exec, run() returned it)
  // is no longer followed: it stays stopped and traced by the calling
  // thread, for record/entry_stop.h to take. Before release().
  void hand_over(pid_t pid);

  // Lets every followed process go on, each with the signal it was
  // stopped for; ends the ptrace.
  void release();

  // --follow-forks for the whole recording: lets every followed process
  // go on, still followed (with its children), so that each program one
  // of them execs can be probed before it runs (handle_events()). The caller has
  // blocked SIGCHLD in every thread of atrace (block_child_signals()).
  void keep_following();
  // Readable when a followed process stopped or ended (keep_following()).
  int fd() const;
  // What the followed processes did since the last call: each exec is
  // handed to `on_exec` while that process is held just after it (its new
  // program loaded, none of its instructions run), then it goes on. The
  // first call also hands over the execs that happened while run()
  // stopped everyone (another process's exec raced the match), held
  // since. `on_exec` returns true when it took the process (hand_over())
  // and let it go itself: it is not resumed here.
  void handle_events(const std::function<bool(const ExecMatch&)>& on_exec);

  // A process forked by a followed one, at its first stop (before its
  // first instruction), is handed to `take` before it goes on:
  // --fast-path gives a fork child of the patched program its ring there
  // (record/fast_path.h). `take` returns whether it let the child go on
  // itself; else it goes on here. One that comes while a stop of the fast
  // path's waits (other()) is held until the next handle_events(), unless
  // the process being stopped forked it (it may be a vfork child its
  // parent's stop waits for): that one goes on, taken later by its fork
  // event.
  void on_fork(std::function<bool(pid_t)> take) { on_fork_ = std::move(take); }
  // From here on a killed atrace leaves every followed process running,
  // untraced (no PTRACE_O_EXITKILL): set on those stopped now (every one
  // after run() found a match), and on the others as a stop lets them go.
  void outlive_atrace();

  // fastpath::Tracer
  unsigned long options() const override { return options_; }
  void adopted(pid_t tid) override;
  void noted(pid_t tid, int status) override;
  void other(pid_t tid, int status, pid_t stopping) override;
  bool holds(pid_t tid) const override { return resume_.count(tid) != 0; }

 private:
  std::optional<ExecMatch> on_event(pid_t pid, int status,
                                    const std::function<bool(const ExecMatch&)>& matches);
  void stop_all();
  void exited(pid_t pid, int status);
  std::optional<ExecMatch> execd(pid_t pid);
  pid_t add_child(pid_t pid);

  pid_t top_;
  bool forks_;
  unsigned long options_;
  std::function<bool(pid_t)> on_fork_;
  pid_t stopping_ = 0;             // other(): the process a fast path's stop waits for
  std::vector<pid_t> held_forks_;  // new processes held by other() for on_fork()
  bool released_ = false;
  int interrupted_ = 0;
  std::set<pid_t> alive_;        // followed threads and processes, not ended
  std::set<pid_t> fresh_;        // forked, first stop not seen yet
  std::map<pid_t, int> resume_;  // stopped: the signal to resume it with
  // Stopped at an exec while stop_all() gathered everyone: held for
  // handle_events(), which probes their programs before they run.
  std::vector<ExecMatch> held_execs_;
  std::vector<std::string> ran_;
  std::optional<int> top_status_;
  std::unique_ptr<ChildSignals> signals_;  // keep_following()
};

// SIGCHLD blocked in the calling thread and the threads it starts from
// then on: a followed process's stop or end is then read from
// ExecFollower::fd(), whatever thread of atrace the kernel would have
// picked for it.
void block_child_signals();

}  // namespace atrace
