// What atrace says on stderr, in one voice: every error, warning, note and
// progress line goes through here, so the prefix of each kind and the
// wording of an errno are each one rule (tests/check_one_voice.py fails
// on a file elsewhere that writes "atrace: " to stderr by hand).
//
//   base::error("%s: cannot open", path);   // "atrace: PATH: cannot open"
//   base::warning("%zu events lost", n);    // "atrace: warning: 3 events lost"
//   base::note("waiting for %s", lib);      // "atrace: note: waiting for ..."
//   base::progress("detached %zu probes", n);  // "atrace: detached 4 probes"
#pragma once

#include <cstdarg>
#include <string>
#include <string_view>

namespace atrace::base {

enum class Severity {
  Error,     // what stopped a command; its exit status is not 0
  Warning,   // what went wrong while the command still did its job
  Note,      // what the user may want to know to get more from the command
  Progress,  // what atrace did or is doing: "probing ...", "detached ..."
};

// "atrace: ", "atrace: warning: ", "atrace: note: ", "atrace: ".
std::string_view prefix(Severity s);
// The whole line as written: the prefix, the message and a newline.
std::string diagnostic_line(Severity s, std::string_view message);

// Each writes its line to stderr with one write, so lines of concurrent
// threads do not interleave. The message is printf-style, without the
// prefix and without the newline.
void say(Severity s, std::string_view message);
void vsay(Severity s, const char* format, va_list args);
void error(const char* format, ...) __attribute__((format(printf, 1, 2)));
void warning(const char* format, ...) __attribute__((format(printf, 1, 2)));
void note(const char* format, ...) __attribute__((format(printf, 1, 2)));
void progress(const char* format, ...) __attribute__((format(printf, 1, 2)));

// An errno as every message words it: the C library's text
// ("Permission denied"); negative values (the kernel's and libbpf's -errno)
// are taken as their positive errno, and the kernel-internal ENOTSUPP
// (524), which the C library does not know, is named.
std::string errno_text(int err);

}  // namespace atrace::base
