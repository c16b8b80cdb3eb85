// The signals that stop a recording (SIGINT, SIGTERM, SIGHUP), handled the
// same way in every phase of `atrace record`:
//
//   - blocked from the first instruction of the command, so every thread
//     atrace starts afterwards (calibration, unwind guard, detacher) has
//     them blocked too, and taken through a signalfd;
//   - a disposition inherited as ignored (background jobs of scripts) is
//     reset for atrace's own handling, and set back to ignored in a
//     launched target before its exec (Target::launch_held); so is every
//     other signal inherited as ignored, glibc's internal 32 and 33
//     included (glibc installs its own handler for 33 when a threaded
//     process changes credentials, which an exec then resets to default);
//   - before the target is released, one of them ends the run: nothing
//     recorded, a launched target never started, exit status 128 + signal;
//   - while recording, the first one stops the recording;
//   - while a launched target is waited for after the recording, each one
//     is passed on to the target, whose status atrace then returns;
//   - they stay blocked until atrace exits: one arriving during teardown
//     never kills it half-way (the summary and the target's status are
//     always given).
#pragma once

#include <signal.h>

#include <cstdint>

#include "base/unique_fd.h"

namespace atrace {

class Target;

// Ignores the signals of `mask` (bit sig - 1) with the raw system call:
// async-signal-safe, for a forked child before its exec.
void ignore_signals(uint64_t mask);
// Whether the kernel has `sig` ignored for this process.
bool signal_ignored(int sig);

class StopSignals {
 public:
  StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // Readable when one is pending (epoll it).
  int fd() const { return fd_.get(); }
  // The next pending stop signal, taken; 0 when none.
  int take();
  // The signals (1 to 64) ignored when atrace started, bit sig - 1, read
  // from the kernel (glibc's sigaction hides 32 and 33): for a launched
  // target (ignore_signals()).
  uint64_t inherited_ignored() const { return ignored_; }

 private:
  UniqueFd fd_;
  uint64_t ignored_ = 0;
};

// "SIGINT", "SIGTERM", "SIGHUP" (else "signal N").
const char* stop_signal_name(int sig);

// Launch mode: waits for the target to end, passing each stop signal that
// arrives meanwhile on to it; returns its shell-style status. Attach mode:
// 0 at once.
int wait_passing_signals(Target& target, StopSignals& stop);

}  // namespace atrace
