#include "sync/realtime_rendezvous.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace atrace::sync {

namespace {

// a's MONOTONIC when a's REALTIME read `realtime`, between the two
// snapshots around it (the nearest two past either end). Between
// snapshots REALTIME and MONOTONIC run at one rate (NTP slews both); only
// a step of REALTIME (settimeofday) would bend this, and a snapshot a
// second brackets that.
struct Meeting {
  long double mono = 0;
  const ClockSnapshot* nearest = nullptr;
};

Meeting mono_at_realtime(const std::vector<ClockSnapshot>& snaps, int64_t realtime) {
  if (snaps.size() == 1) {
    const auto& s = snaps[0];
    return Meeting{static_cast<long double>(s.mono_mid_ns() + (realtime - s.realtime_ns)), &s};
  }
  auto it = std::lower_bound(snaps.begin(), snaps.end(), realtime,
                             [](const ClockSnapshot& s, int64_t r) { return s.realtime_ns < r; });
  size_t i = static_cast<size_t>(it - snaps.begin());
  i = std::clamp<size_t>(i, 1, snaps.size() - 1);
  const auto& p = snaps[i - 1];
  const auto& n = snaps[i];
  long double rate = n.realtime_ns == p.realtime_ns
                         ? 1.0L
                         : static_cast<long double>(n.mono_mid_ns() - p.mono_mid_ns()) /
                               static_cast<long double>(n.realtime_ns - p.realtime_ns);
  long double mono = p.mono_mid_ns() + rate * static_cast<long double>(realtime - p.realtime_ns);
  bool nearer_p = std::abs(realtime - p.realtime_ns) <= std::abs(realtime - n.realtime_ns);
  return Meeting{mono, nearer_p ? &p : &n};
}

int64_t bound_of(const ClockSnapshot& a, const ClockSnapshot& b) {
  return (a.maxerror_us + b.maxerror_us) * 1000 + a.bracket_ns() + b.bracket_ns();
}

}  // namespace

std::optional<PairEstimate> fit_realtime(HostIndex a, const HostClock& host_a, HostIndex b,
                                         const HostClock& host_b) {
  if (host_a.snapshots.empty() || host_b.snapshots.empty()) return std::nullopt;
  std::vector<Knot> knots;
  std::vector<int64_t> bounds;
  bool unsynchronised = false;
  for (const ClockSnapshot& s : host_b.snapshots) {
    Meeting m = mono_at_realtime(host_a.snapshots, s.realtime_ns);
    int64_t x = s.mono_mid_ns();
    if (!knots.empty() && x <= knots.back().x) continue;
    knots.push_back(Knot{x, static_cast<int64_t>(std::llround(m.mono))});
    bounds.push_back(bound_of(*m.nearest, s));
    unsynchronised = unsynchronised || s.unsynchronised || m.nearest->unsynchronised;
  }
  // A segment between two knots: the larger of its ends' bounds.
  for (size_t i = 0; i + 1 < bounds.size(); ++i) bounds[i] = std::max(bounds[i], bounds[i + 1]);

  PairEstimate e;
  e.b_to_a = from_knots(knots, bounds);
  e.report.a = a;
  e.report.b = b;
  e.report.method = Method::kRealtime;
  e.report.windows = knots.size();
  e.report.quality = unsynchronised ? Quality::kFail : Quality::kApproximate;
  summarise(e, knots.front().x, knots.back().x);
  return e;
}

PairEstimate same_boot(HostIndex a, HostIndex b) {
  PairEstimate e;
  e.b_to_a = identity_map();
  e.report.a = a;
  e.report.b = b;
  e.report.method = Method::kSameBoot;
  e.report.quality = Quality::kAccurate;
  e.report.bound_ns = 0;
  return e;
}

}  // namespace atrace::sync
