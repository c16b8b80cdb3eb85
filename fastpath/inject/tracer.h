// The tracer a process already has in atrace itself: a launched command
// followed through its forks and execs (record/exec_follow.h) is traced by
// atrace's main thread for the whole recording, and a process has one
// tracer. StoppedProcess (stopped_process.h) given this interrupts such a
// process's threads instead of seizing them, continues them instead of
// detaching them, and hands every wait status that is not one of its own
// stops to the tracer, whose bookkeeping (which processes and threads it
// follows, their first stops, the execs it holds) must stay true.
#pragma once

#include <sys/types.h>

namespace atrace::fastpath {

class Tracer {
 public:
  virtual ~Tracer() = default;

  // The ptrace options of every thread of its: set on a thread seized
  // here (one no clone event made traced) and again on each thread let
  // go, so that a thread the caller held with other options goes on with
  // the tracer's.
  virtual unsigned long options() const = 0;
  // A thread the caller held (PTRACE_SEIZE) or this seized: the tracer's
  // from now on.
  virtual void adopted(pid_t tid) = 0;
  // A wait status of a thread being stopped that is not a stop of ours:
  // a fork, vfork or clone event (the child is the tracer's to follow), a
  // new thread's first stop, an exec (the tracer holds the process there
  // and takes it), its end. Bookkeeping only: StoppedProcess continues the
  // thread itself, or gives it up (exec, end).
  virtual void noted(pid_t tid, int status) = 0;
  // A wait status of a thread that is not being stopped (another process
  // of the tracer's, or a child's first stop) while process `stopping` is:
  // the tracer acts on it as it would have (lets it go on, holds an exec
  // or a new process for its next look), without starting another stop
  // from here. A new process `stopping` forked must go on: a vfork parent
  // reaches its stop only once its child has exec'd or exited.
  virtual void other(pid_t tid, int status, pid_t stopping) = 0;
  // Whether the tracer holds `tid` stopped for its next look (its stop's
  // status taken: a stop of it here would wait for a status that never
  // comes).
  virtual bool holds(pid_t tid) const = 0;
};

}  // namespace atrace::fastpath
