// sync/ on simulated runs (issue 32's simulation test): 4 and 16 hosts,
// offsets up to +-10 s, drifts of 5..30 ppm either way, one-way delays of
// 20 us..2 ms with jitter different each way. Fewer seeds here than the
// issue's 1,000 to keep the unit tests quick; bench/sync_accuracy runs
// the 1,000 (docs/BENCHMARKS.md, "Clock synchronisation").
#include <gtest/gtest.h>

#include <algorithm>

#include "sync/sync.h"

using namespace atrace::sync;

namespace {

struct Tally {
  int seeds = 0;
  int seeds_within = 0;  // every tree pair within half its minimum delays
  size_t outside_bounds = 0;
  size_t violations_after = 0;
  size_t violations_before = 0;
};

Tally run(uint32_t hosts, int seeds) {
  Tally t;
  for (int seed = 1; seed <= seeds; ++seed) {
    Simulation sim = simulate(SimOptions{.hosts = hosts, .seed = static_cast<uint64_t>(seed)});
    SyncResult r = synchronize(sim.input);
    SimScore s = score(sim, r.hosts);
    bool within = true;
    for (const auto& p : r.pairs) {
      EXPECT_EQ(p.method, Method::kMessages);
      if (!p.in_tree) continue;
      for (const auto& l : s.links)
        if (l.a == p.a && l.b == p.b) within = within && l.max_error_ns <= l.allowed_ns;
    }
    auto times = corrected_events(sim, r.hosts);
    RepairResult rep = causal_repair(times, sim.matched);
    ++t.seeds;
    t.seeds_within += within;
    t.outside_bounds += s.outside_bounds;
    t.violations_before += rep.violations_before;
    t.violations_after += rep.violations_after;
  }
  return t;
}

}  // namespace

TEST(SyncSimulation, FourHostsWithinHalfTheMinimumDelaysInsideTheBoundsAndCausal) {
  Tally t = run(4, 100);
  EXPECT_GE(t.seeds_within * 100, t.seeds * 99);
  EXPECT_EQ(t.outside_bounds, 0u);
  EXPECT_GT(t.violations_before, 0u);  // the repair had work to do
  EXPECT_EQ(t.violations_after, 0u);
}

TEST(SyncSimulation, SixteenHostsWithinHalfTheMinimumDelaysInsideTheBoundsAndCausal) {
  Tally t = run(16, 10);
  EXPECT_GE(t.seeds_within * 100, t.seeds * 99);
  EXPECT_EQ(t.outside_bounds, 0u);
  EXPECT_EQ(t.violations_after, 0u);
}

// Per pair, on the same messages and snapshots: the windowed hull beats
// the averaged constant offset and the REALTIME rendezvous (NTP errors of
// up to 2 ms a host, within the maxerror the kernel states).
TEST(SyncSimulation, BeatsAnAveragedOffsetAndRealtimeRendezvous) {
  std::vector<int64_t> ours, averaged, realtime;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    Simulation sim = simulate(SimOptions{.hosts = 4, .seed = seed});
    for (auto [a, b] : sim.links) {
      const auto& ab = samples(sim, a, b);
      const auto& ba = samples(sim, b, a);
      auto hull = fit_messages(a, b, ab, ba, sim.input.options);
      auto rt = fit_realtime(a, sim.input.hosts[a], b, sim.input.hosts[b]);
      ASSERT_TRUE(hull && rt);
      ours.push_back(pair_error(sim, a, b, hull->b_to_a));
      averaged.push_back(pair_error(sim, a, b, averaged_offset(ab, ba)));
      realtime.push_back(pair_error(sim, a, b, rt->b_to_a));
    }
  }
  size_t beats_averaged = 0, beats_realtime = 0;
  for (size_t i = 0; i < ours.size(); ++i) {
    beats_averaged += ours[i] < averaged[i];
    beats_realtime += ours[i] < realtime[i];
  }
  // The averaged offset has no drift (30 ppm over 20 s is 600 us) and
  // takes the mean delays for the minimum ones; REALTIME is as good as
  // NTP, which is sometimes better than half the difference of two
  // directions' minimum delays of up to 1 ms (89 % of these pairs).
  EXPECT_GE(beats_averaged * 100, ours.size() * 95);
  EXPECT_GE(beats_realtime * 100, ours.size() * 85);
  auto median = [](std::vector<int64_t> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  EXPECT_LT(median(ours) * 3, median(averaged));
  EXPECT_LT(median(ours) * 5, median(realtime));
}
