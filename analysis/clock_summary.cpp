#include "analysis/clock_summary.h"

#include <algorithm>

namespace atrace::analysis {

std::optional<ClockSummary> summarize_clocks(const formats::HostClocks& c) {
  if (c.snapshots.empty()) return std::nullopt;
  ClockSummary s;
  s.snapshots = c.snapshots.size();
  s.min_width_ns = UINT64_MAX;
  for (const auto& k : c.snapshots) {
    s.periodic += k.when == formats::ClockSnapshot::When::Periodic;
    s.has_start |= k.when == formats::ClockSnapshot::When::Start;
    s.has_stop |= k.when == formats::ClockSnapshot::When::Stop;
    s.min_width_ns = std::min(s.min_width_ns, k.width_ns());
    s.max_width_ns = std::max(s.max_width_ns, k.width_ns());
  }
  const auto& first = c.snapshots.front();
  const auto& last = c.snapshots.back();
  s.maxerror_us = last.maxerror_us;
  s.esterror_us = last.esterror_us;
  s.synchronised = last.synchronised;
  if (c.snapshots.size() >= 2 && last.mono_mid_ns() > first.mono_mid_ns()) {
    // Differences first: both clocks are ~1.7e18 ns, their gap fits int64.
    const int64_t gap_first = static_cast<int64_t>(first.real_ns - first.mono_mid_ns());
    const int64_t gap_last = static_cast<int64_t>(last.real_ns - last.mono_mid_ns());
    s.span_ns = last.mono_mid_ns() - first.mono_mid_ns();
    s.real_drift_ns = gap_last - gap_first;
    s.real_drift_ppm = static_cast<double>(*s.real_drift_ns) * 1e6 / static_cast<double>(s.span_ns);
  }
  return s;
}

}  // namespace atrace::analysis
