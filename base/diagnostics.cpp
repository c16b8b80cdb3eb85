#include "base/diagnostics.h"

#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace atrace::base {

namespace {

constexpr int kENOTSUPP = 524;  // linux/errno.h, kernel-internal

std::string vformat(const char* format, va_list args) {
  va_list copy;
  va_copy(copy, args);
  const int n = std::vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  if (n <= 0) return {};
  std::string out(static_cast<size_t>(n) + 1, '\0');
  std::vsnprintf(out.data(), out.size(), format, args);
  out.resize(static_cast<size_t>(n));
  return out;
}

}  // namespace

std::string_view prefix(Severity s) {
  switch (s) {
    case Severity::Warning: return "atrace: warning: ";
    case Severity::Note: return "atrace: note: ";
    case Severity::Error:
    case Severity::Progress: break;
  }
  return "atrace: ";
}

std::string diagnostic_line(Severity s, std::string_view message) {
  std::string line(prefix(s));
  line += message;
  line += '\n';
  return line;
}

void say(Severity s, std::string_view message) {
  const std::string line = diagnostic_line(s, message);
  std::fwrite(line.data(), 1, line.size(), stderr);  // stderr is unbuffered: one write
}

void vsay(Severity s, const char* format, va_list args) { say(s, vformat(format, args)); }

void error(const char* format, ...) {
  va_list args;
  va_start(args, format);
  vsay(Severity::Error, format, args);
  va_end(args);
}

void warning(const char* format, ...) {
  va_list args;
  va_start(args, format);
  vsay(Severity::Warning, format, args);
  va_end(args);
}

void note(const char* format, ...) {
  va_list args;
  va_start(args, format);
  vsay(Severity::Note, format, args);
  va_end(args);
}

void progress(const char* format, ...) {
  va_list args;
  va_start(args, format);
  vsay(Severity::Progress, format, args);
  va_end(args);
}

std::string errno_text(int err) {
  if (err < 0) err = -err;
  if (err == kENOTSUPP) return "Operation not supported by the kernel (ENOTSUPP)";
  return std::strerror(err);
}

}  // namespace atrace::base
