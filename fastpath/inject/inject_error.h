// What goes wrong when atrace stops a process, runs system calls in it or
// patches its code: one exception type with a message for the user, so the
// recorder can report it and fall back to the kernel probe path.
#pragma once

#include <stdexcept>
#include <string>

namespace atrace::fastpath {

class InjectError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The process (or the thread the operation needed) ended meanwhile.
class ProcessGone : public InjectError {
 public:
  using InjectError::InjectError;
};

// "what: strerror(errno)" for a failed system call of atrace's.
std::string errno_message(const std::string& what, int err);

}  // namespace atrace::fastpath
