// The traced process: attached to (-p PID) or launched held before exec
// (-- CMD). Launch mode forks a child that waits on a pipe before execve, so
// probes are in place before the program's first instruction; if atrace dies
// before releasing it, the child sees EOF and exits without running.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <cstdint>

#include <string>
#include <vector>

#include "base/unique_fd.h"
#include "record/record_error.h"

namespace atrace {

class TargetError : public RecordError {
 public:
  using RecordError::RecordError;
};

class Target {
 public:
  // Throws TargetError "no process with pid N" / permission.
  static Target attach(pid_t pid);
  // Forks a held child that will execv(exe_path, argv). Signals are
  // unblocked in the child before exec, and those in `ignore` (ignored when
  // atrace started: stop_signals.h) ignored again. `stdout_to_stderr`
  // keeps the program's output out of a trace written to stdout (-o -).
  // `traceable`: the held child may be ptraced by atrace even when atrace
  // runs with file capabilities (exec_follow.h); only for a child started
  // before atrace holds any BPF object, which a ptracer could take from it.
  static Target launch_held(const std::string& exe_path, const std::vector<std::string>& argv,
                            bool stdout_to_stderr = false, uint64_t ignore = 0,
                            bool traceable = false);

  Target(Target&& o) noexcept { *this = std::move(o); }
  Target& operator=(Target&& o) noexcept;
  Target(const Target&) = delete;
  Target& operator=(const Target&) = delete;
  ~Target();

  // Launch mode: let the child exec. Throws TargetError when exec failed.
  void release();

  pid_t pid() const { return pid_; }
  int pidfd() const { return pidfd_.get(); }  // readable once the process exited
  bool launched() const { return launched_; }
  bool exited() const;  // non-blocking

  // Launch mode: wait for the child and return a shell-style status (exit
  // code, or 128 + signal). Attach mode: returns 0.
  int wait_exit();
  // Launch mode: the child was reaped by its tracer (exec_follow.h) with
  // this wait status.
  void reaped(int wait_status);

  // The target's command line, from /proc/PID/cmdline, space-joined.
  std::string command_line() const;

 private:
  Target() = default;
  pid_t pid_ = -1;
  bool launched_ = false;
  bool reaped_ = false;
  int status_ = 0;
  UniqueFd pidfd_;
  UniqueFd go_;   // launch: write end of the hold pipe
  UniqueFd err_;  // launch: read end of the exec-error pipe (CLOEXEC)
  std::vector<std::string> argv_;
};

}  // namespace atrace
