// The recording side's one error type: a problem with the user's request
// or environment, printed by `atrace record` as one line ("atrace: WHAT")
// with exit status 1. The recording parts' own errors (TargetError,
// OutputError, UnwindGuardError) are kinds of it, so that only a caller
// that does something different for one of them catches it.
#pragma once

#include <stdexcept>
#include <string>

namespace atrace {

class RecordError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A stop signal before the recording started (stop_signals.h): nothing was
// recorded, a launched target was never started; exit with 128 + signal.
class RecordInterrupted : public RecordError {
 public:
  RecordInterrupted(int sig, const std::string& what) : RecordError(what), signal(sig) {}
  int signal;
};

}  // namespace atrace
