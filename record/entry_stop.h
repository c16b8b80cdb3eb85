// `record --fast-path -- CMD`: the launched program held at its entry point
// (AT_ENTRY), where the fast path is installed (record/fast_path.h).
//
// Why there: the functions to patch are in the program and its libraries;
// none is mapped before the exec, and a library only once ld.so has mapped
// it. At the entry point ld.so has mapped every DT_NEEDED library and run
// their relocations and constructors, and the program has run none of its
// own code. What runs before it is not recorded: ld.so and the libraries'
// constructors (glibc's ld.so runs those; the program's own constructors
// run after the entry, from __libc_start_main, and are recorded).
//
// How: the process comes stopped just after its exec, traced by the calling
// thread (handed over by record/exec_follow.h). A hardware execution
// breakpoint (debug register 0, set with PTRACE_POKEUSER) is put on the
// entry point and the process let run to it: unlike an int3 it changes no
// byte of the program, and a process a library constructor forks does not
// inherit it. At the breakpoint the debug registers are cleared and the
// thread brought to an interrupt stop, the state in which
// fastpath/inject/stopped_process.h holds threads: stopped() hands it over.
//
// Never left behind: with PTRACE_O_EXITKILL a dying atrace kills the
// process (the hold pipe's rule, record/target.h: the command does not run
// its own code untraced because atrace went away); an EntryStop destroyed
// before it handed the process over (an error, a stop signal) kills it too.
// The kernel reaps nothing here: the Target waits for it as for any
// launched command.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>

namespace atrace {

class StopSignals;

namespace fastpath {
class StoppedProcess;
class Tracer;
}  // namespace fastpath

class EntryStop {
 public:
  // Takes `pid`, stopped at its PTRACE_EVENT_EXEC stop by the calling
  // thread's PTRACE_SEIZE. Throws TargetError when it is gone.
  // `die_with_atrace` false (a program a followed process exec'd, whose
  // tree a killed atrace leaves running): no PTRACE_O_EXITKILL, and one
  // not handed over is let go (detached) rather than killed.
  explicit EntryStop(pid_t pid, bool die_with_atrace = true);
  EntryStop(const EntryStop&) = delete;
  EntryStop& operator=(const EntryStop&) = delete;
  ~EntryStop();  // kills the process unless stopped() took it (see above)

  // Runs the process to its entry point. Signals it gets meanwhile are
  // delivered as without atrace. Throws TargetError when it ends, execs
  // again or cannot be run there; RecordInterrupted for a stop signal.
  void run(StopSignals& stop);
  // The entry point (after run()).
  uint64_t entry() const { return entry_; }

  // Every thread stopped (library constructors may have started some), the
  // main thread where run() left it; the process is the StoppedProcess's
  // from here on (released with it). `tracer`: the process goes on traced
  // by it, with its options (--follow-forks, fastpath/inject/tracer.h),
  // rather than untraced.
  std::unique_ptr<fastpath::StoppedProcess> stopped(fastpath::Tracer* tracer = nullptr);

 private:
  pid_t pid_;
  bool die_with_atrace_;
  uint64_t entry_ = 0;
  bool handed_over_ = false;
};

}  // namespace atrace
