// The one refreshed status line of `atrace record` on stderr, shown only
// when stderr is a terminal (never in pipes or logs), and not when
// something else draws on the terminal (`atrace top`).
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "base/diagnostics.h"

namespace atrace {

class StatusLine {
 public:
  explicit StatusLine(bool wanted = true) : enabled_(wanted && isatty(STDERR_FILENO)) {}
  bool enabled() const { return enabled_; }
  void show(size_t probes, uint64_t events, uint64_t lost, double elapsed) {
    if (!enabled_) return;
    // Redrawn in place: the progress prefix without diagnostics' newline.
    const std::string prefix(base::prefix(base::Severity::Progress));
    std::fprintf(stderr, "\r%s%zu probes, %llu events, %llu lost, %.1f s\033[K", prefix.c_str(),
                 probes, static_cast<unsigned long long>(events),
                 static_cast<unsigned long long>(lost), elapsed);
    shown_ = true;
  }
  void clear() {
    if (shown_) std::fputs("\r\033[K", stderr);
    shown_ = false;
  }

 private:
  bool enabled_;
  bool shown_ = false;
};

}  // namespace atrace
