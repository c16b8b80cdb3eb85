// sync/spanning_tree.h via synchronize(): the best pairs, composed from
// the reference host; pairs left out checked as loops.
#include <gtest/gtest.h>

#include "sync/simulate.h"
#include "sync/synchronize.h"

using namespace atrace::sync;

namespace {
// Host h's clock reads true time + h seconds; messages every 10 ms both
// ways between the given pairs, 40 us one way, 60 us back.
SyncInput hosts_with_links(uint32_t n, std::vector<std::pair<HostIndex, HostIndex>> links) {
  SyncInput in;
  for (uint32_t h = 0; h < n; ++h)
    in.hosts.push_back(HostClock{"h" + std::to_string(h), "b" + std::to_string(h), {}});
  auto clock = [](HostIndex h, int64_t t) { return t + static_cast<int64_t>(h) * 1'000'000'000; };
  for (auto [a, b] : links) {
    DirectedMessages ab{a, b, {}}, ba{b, a, {}};
    for (int64_t t = 1'000'000'000; t < 11'000'000'000; t += 10'000'000) {
      ab.samples.push_back({clock(a, t), clock(b, t + 40'000)});
      ba.samples.push_back({clock(b, t + 5'000'000), clock(a, t + 5'060'000)});
    }
    in.messages.push_back(ab);
    in.messages.push_back(ba);
  }
  return in;
}
}  // namespace

TEST(SyncSpanningTree, ComposesAlongAChainAndAddsTheBounds) {
  SyncResult r = synchronize(hosts_with_links(3, {{0, 1}, {1, 2}}));
  ASSERT_EQ(r.hosts.size(), 3u);
  EXPECT_EQ(r.hosts[2].parent, 1u);
  EXPECT_EQ(r.hosts[1].parent, 0u);
  // Host 2 reads 2 s ahead: its correction takes them off, within the
  // two pairs' errors (10 us each: half of 60 - 40; a few ns of rounding).
  int64_t corrected = map_time(r.hosts[2].segments, 7'000'000'000);
  EXPECT_NEAR(static_cast<double>(corrected), 5'000'000'000.0, 2 * 10'100);
  EXPECT_GE(bound_at(r.hosts[2].segments, 7'000'000'000), 2 * 50'000);
  ASSERT_EQ(r.pairs.size(), 2u);
  for (const auto& p : r.pairs) EXPECT_TRUE(p.in_tree);
}

TEST(SyncSpanningTree, APairLeftOutIsALoopWhoseResidualIsChecked) {
  SyncResult r = synchronize(hosts_with_links(3, {{0, 1}, {1, 2}, {0, 2}}));
  ASSERT_EQ(r.pairs.size(), 3u);
  int in_tree = 0;
  for (const auto& p : r.pairs) {
    in_tree += p.in_tree;
    if (p.in_tree) continue;
    EXPECT_TRUE(p.loop_consistent);
    // Every pair is 10 us off the same way: a loop of two against one.
    EXPECT_LE(p.loop_residual_ns, 3 * 10'000 + 3);
  }
  EXPECT_EQ(in_tree, 2);
}

TEST(SyncSpanningTree, AHostWithNoEvidenceIsLeftAloneAndSaysSo) {
  SyncResult r = synchronize(hosts_with_links(3, {{0, 1}}));
  EXPECT_TRUE(r.hosts[1].connected);
  EXPECT_FALSE(r.hosts[2].connected);
  EXPECT_EQ(map_time(r.hosts[2].segments, 42), 42);
  EXPECT_EQ(bound_at(r.hosts[2].segments, 42), kUnbounded);
}

TEST(SyncSpanningTree, WithoutMessagesRealtimeJoinsTheHosts) {
  Simulation sim = simulate(SimOptions{.hosts = 3, .seed = 3, .duration_ns = 5'000'000'000});
  sim.input.messages.clear();
  SyncResult r = synchronize(sim.input);
  SimScore s = score(sim, r.hosts);
  EXPECT_EQ(s.outside_bounds, 0u);
  for (const auto& p : r.pairs) {
    EXPECT_EQ(p.method, Method::kRealtime);
    EXPECT_EQ(p.quality, Quality::kApproximate);
  }
  EXPECT_EQ(r.pairs.size(), 2u);  // only the tree's edges: no messages, no loops to report
}

TEST(SyncSpanningTree, MessagesOneWayOnlyFallBackToRealtime) {
  Simulation sim = simulate(SimOptions{.hosts = 2, .seed = 5, .duration_ns = 5'000'000'000});
  std::erase_if(sim.input.messages, [](const DirectedMessages& d) { return d.from == 1; });
  SyncResult r = synchronize(sim.input);
  ASSERT_EQ(r.pairs.size(), 1u);
  EXPECT_EQ(r.pairs[0].method, Method::kRealtime);
  EXPECT_TRUE(r.pairs[0].in_tree);
  EXPECT_EQ(score(sim, r.hosts).outside_bounds, 0u);
}
