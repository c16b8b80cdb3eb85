#include "record/phase_times.h"

#include <time.h>

#include "base/clock.h"
#include "base/diagnostics.h"

namespace atrace {

void PhaseTimes::begin() { last_ = now_ns(CLOCK_MONOTONIC); }

void PhaseTimes::end(const std::string& name, std::string note) {
  const uint64_t now = now_ns(CLOCK_MONOTONIC);
  phases_.push_back({name, now - last_, std::move(note)});
  last_ = now;
}

void PhaseTimes::add(const std::string& name, uint64_t ns, std::string note) {
  phases_.push_back({name, ns, std::move(note)});
}

void PhaseTimes::skip() { last_ = now_ns(CLOCK_MONOTONIC); }

std::string PhaseTimes::text() const {
  std::string out;
  char ms[32];
  for (const auto& p : phases_) {
    std::snprintf(ms, sizeof ms, "%.1f ms", static_cast<double>(p.ns) / 1e6);
    out += base::diagnostic_line(
        base::Severity::Progress,
        "phase " + p.name + ": " + ms + (p.note.empty() ? "" : " (" + p.note + ")"));
  }
  return out;
}

void PhaseTimes::print(std::FILE* out) const { std::fputs(text().c_str(), out); }

}  // namespace atrace
