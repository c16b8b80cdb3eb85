// sync/causal_repair.h: no receive before its send, by the least shifts.
#include <gtest/gtest.h>

#include "sync/causal_repair.h"
#include "sync/simulate.h"
#include "sync/synchronize.h"

using namespace atrace::sync;

TEST(SyncCausalRepair, MovesAnEarlyReceiveToItsSendPlusTheMinimumDelay) {
  // Host 0 sends at 1000; host 1 "receives" at 900 (its correction was
  // 100 ns short), then has events at 2000 and 1'000'000.
  std::vector<std::vector<int64_t>> t{{500, 1000, 3000}, {100, 900, 2000, 1'000'000}};
  RepairOptions o;
  o.min_delay_ns[{0, 1}] = 50;
  RepairResult r = causal_repair(t, {{0, 1, 1, 1}}, o);
  EXPECT_EQ(r.violations_before, 1u);
  EXPECT_EQ(r.violations_after, 0u);
  EXPECT_EQ(t[1][1], 1050);  // the least: send + 50
  EXPECT_EQ(r.largest_shift_ns[1], 150);
  EXPECT_EQ(r.largest_shift_ns[0], 0);
  EXPECT_EQ(t[0], (std::vector<int64_t>{500, 1000, 3000}));  // senders stay
  // Backward amortisation: 800 ns before the jump, 1 % of it comes off.
  EXPECT_EQ(t[1][0], 100 + 150 - 8);
  // Forward: the shift is given back at 1 % of the time since.
  EXPECT_EQ(t[1][2], 2000 + 150 - 11);
  EXPECT_EQ(t[1][3], 1'000'000);  // long after: back on the corrected line
  auto key = std::pair<HostIndex, HostIndex>(0, 1);
  EXPECT_EQ(r.pairs.at(key).violations_before, 1u);
  EXPECT_EQ(r.pairs.at(key).violations_after, 0u);
}

TEST(SyncCausalRepair, TheRampBackStopsAtASendWhoseReceiveWouldBreak) {
  // Host 1 sends at 800 (received by host 0 at 810), then receives at
  // 900 a message host 0 sent at 1500: the jump of 600 would ramp the
  // send at 800 to ~1398, after its receive; it stays.
  std::vector<std::vector<int64_t>> t{{810, 1500}, {800, 900}};
  RepairResult r = causal_repair(t, {{1, 0, 0, 0}, {0, 1, 1, 1}});
  EXPECT_EQ(r.violations_before, 1u);
  EXPECT_EQ(r.violations_after, 0u);
  EXPECT_EQ(t[1][1], 1500);
  EXPECT_EQ(t[1][0], 800);
}

TEST(SyncCausalRepair, ChainsOfMessagesAreRepairedInCausalOrder) {
  // 0 -> 1 -> 2, each hop received "before" it was sent.
  std::vector<std::vector<int64_t>> t{{1000}, {900, 950}, {800}};
  RepairResult r = causal_repair(t, {{0, 0, 1, 0}, {1, 1, 2, 0}});
  EXPECT_EQ(r.violations_before, 2u);
  EXPECT_EQ(r.violations_after, 0u);
  EXPECT_GE(t[1][0], 1000);
  EXPECT_GT(t[1][1], t[1][0]);
  EXPECT_GE(t[2][0], t[1][1]);
}

TEST(SyncCausalRepair, ACycleOfMessagesIsReportedNotLoopedOn) {
  // Impossible input: each host receives before it sends the other's.
  std::vector<std::vector<int64_t>> t{{100, 200}, {100, 200}};
  RepairResult r = causal_repair(t, {{0, 1, 1, 0}, {1, 1, 0, 0}});
  EXPECT_EQ(r.violations_after, 1u);
}

TEST(SyncCausalRepair, KeepsEveryHostsOrderOnASimulatedRun) {
  Simulation sim = simulate(SimOptions{.hosts = 4, .seed = 11, .duration_ns = 10'000'000'000});
  SyncResult s = synchronize(sim.input);
  auto times = corrected_events(sim, s.hosts);
  RepairResult r = causal_repair(times, sim.matched);
  EXPECT_GT(r.violations_before, 0u);  // asymmetric delays: some
  EXPECT_EQ(r.violations_after, 0u);
  for (const auto& host : times)
    for (size_t i = 1; i < host.size(); ++i) ASSERT_LE(host[i - 1], host[i]);
  note_repair(s.pairs, r);
  size_t before = 0;
  for (const auto& p : s.pairs) {
    before += p.violations_before;
    EXPECT_EQ(p.violations_after, 0u);
    EXPECT_GE(p.largest_shift_ns, 0);
  }
  EXPECT_EQ(before, r.violations_before);
}
