// analysis/clock_merge.h: a merge's maps, from message ends to corrected
// time lines. Two hosts (two boots) exchange TCP messages; host 1's clock
// is 5 s ahead of host 0's and runs 20 ppm fast. The maps must put host 1
// on host 0's time line within the stated bound, and no receive may come
// before its send once the maps (with the causal repair folded in) are
// applied, as the reader applies them.
#include <gtest/gtest.h>

#include <cstring>

#include "analysis/clock_merge.h"

using namespace atrace;
using analysis::MessageEnd;

namespace {

constexpr int64_t kOffset = 5'000'000'000;  // host 1 = host 0 + 5 s (+ drift)
constexpr double kDrift = 20e-6;

int64_t host1_time(int64_t t0) {
  return t0 + kOffset + static_cast<int64_t>(kDrift * static_cast<double>(t0));
}

formats::HostClocks host(const char* name, const char* boot) {
  formats::HostClocks h;
  h.host_name = name;
  h.boot_id = boot;
  return h;
}

// One end of the TCP connection 169.254.0.1:1000 (host 0) <-> 169.254.0.2:2000 (host 1).
MessageEnd end(uint16_t on, bool recv, uint64_t ts, uint64_t seq) {
  MessageEnd e;
  e.host = on;
  e.machine = on;
  e.pid = e.tid = 100 + on;
  e.ts = ts;
  e.m.recv = recv;
  e.m.proto = formats::NetProto::Tcp;
  e.m.family = 4;
  e.m.bytes = 100;
  e.m.seq = seq;
  const uint8_t a0[4] = {169, 254, 0, 1}, a1[4] = {169, 254, 0, 2};
  const bool local0 = on == 0;
  std::memcpy(e.m.laddr, local0 ? a0 : a1, 4);
  std::memcpy(e.m.paddr, local0 ? a1 : a0, 4);
  e.m.lport = local0 ? 1000 : 2000;
  e.m.pport = local0 ? 2000 : 1000;
  return e;
}

struct Exchange {
  std::vector<MessageEnd> ends;
  // (send index, recv index) of every message.
  std::vector<std::pair<size_t, size_t>> messages;
};

// Every 10 ms for 20 s, a message 0 -> 1 and an answer 1 -> 0, one-way
// delays 40..90 us; `early` answers arrive `early_ns` before they were sent
// (a clock stepped on host 0, or a mismatched pair): what the repair is for.
Exchange exchange(int early = 0, int64_t early_ns = 0) {
  Exchange x;
  uint64_t seq0 = 1000, seq1 = 5000;
  for (int i = 0; i < 2000; i++) {
    const int64_t t = 1'000'000'000 + int64_t{i} * 10'000'000;
    const int64_t d1 = 40'000 + (i * 7919) % 50'000, d2 = 40'000 + (i * 104729) % 50'000;
    x.ends.push_back(end(0, false, static_cast<uint64_t>(t), seq0));
    x.ends.push_back(end(1, true, static_cast<uint64_t>(host1_time(t + d1)), seq0));
    x.messages.push_back({x.ends.size() - 2, x.ends.size() - 1});
    seq0 += 100;
    const int64_t answer = t + d1 + 20'000;
    int64_t arrive = answer + d2;
    if (i >= 1000 && i < 1000 + early) arrive = answer - early_ns;
    x.ends.push_back(end(1, false, static_cast<uint64_t>(host1_time(answer)), seq1));
    x.ends.push_back(end(0, true, static_cast<uint64_t>(arrive), seq1));
    x.messages.push_back({x.ends.size() - 2, x.ends.size() - 1});
    seq1 += 100;
  }
  return x;
}

// Receives before their sends on the merged time line.
size_t violations(const Exchange& x, const formats::Corrections& c, int64_t min_delay = 0) {
  size_t bad = 0;
  for (auto [s, r] : x.messages) {
    const MessageEnd& se = x.ends[s];
    const MessageEnd& re = x.ends[r];
    const int64_t sent = sync::map_time(c.hosts[se.host].map, analysis::send_departure(se));
    const int64_t got = sync::map_time(c.hosts[re.host].map, static_cast<int64_t>(re.ts));
    if (got < sent + min_delay) bad++;
  }
  return bad;
}

}  // namespace

TEST(ClockMerge, TwoHostsOffsetAndDriftWithinTheBound) {
  Exchange x = exchange();
  formats::Corrections c =
      analysis::merge_clocks({host("a", "boot-a"), host("b", "boot-b")}, x.ends, {});
  ASSERT_EQ(c.hosts.size(), 2u);
  EXPECT_EQ(c.messages, 4000u);
  ASSERT_EQ(c.pairs.size(), 1u);
  const auto& p = c.pairs[0];
  EXPECT_EQ(p.method, sync::Method::kMessages);
  EXPECT_EQ(p.quality, sync::Quality::kAccurate);
  EXPECT_EQ(p.messages, 4000u);
  // Everywhere, host 1's corrected time is within its bound of the truth.
  for (int64_t t = 1'000'000'000; t < 21'000'000'000; t += 100'000'000) {
    const int64_t mapped = sync::map_time(c.hosts[1].map, host1_time(t));
    const int64_t bound = sync::bound_at(c.hosts[1].map, host1_time(t));
    EXPECT_LE(std::llabs(mapped - t), bound) << "at " << t;
    EXPECT_LE(bound, 90'000) << "at " << t;  // at most half the two delays' sum, about
  }
  EXPECT_EQ(violations(x, c), 0u);
  EXPECT_EQ(p.violations_after, 0u);
}

TEST(ClockMerge, TheRepairIsInTheMapsTheReaderApplies) {
  // A least delay of 70 us (merge --min-delay) that a third of the
  // messages (40..90 us) do not have once corrected: the repair must move
  // those receives, and the maps must carry its shifts.
  Exchange x = exchange();
  analysis::ClockMergeOptions o;
  o.min_delay_ns = 70'000;
  formats::Corrections c =
      analysis::merge_clocks({host("a", "boot-a"), host("b", "boot-b")}, x.ends, o);
  ASSERT_EQ(c.pairs.size(), 1u);
  EXPECT_GT(c.pairs[0].violations_before, 100u);
  EXPECT_EQ(c.pairs[0].violations_after, 0u);
  EXPECT_GT(std::max(c.hosts[0].largest_shift_ns, c.hosts[1].largest_shift_ns), 0);
  EXPECT_EQ(violations(x, c, 70'000), 0u);
  // Each host's map still keeps its events in order.
  for (const auto& h : c.hosts) {
    int64_t last = INT64_MIN;
    for (int64_t t = 0; t < 30'000'000'000; t += 1'000'000) {
      const int64_t m = sync::map_time(h.map, t);
      EXPECT_GE(m, last) << "at " << t;
      last = m;
    }
  }
}

TEST(ClockMerge, OneBootIsOffsetZeroUnlessEstimated) {
  // Both "hosts" are one boot: their clocks are one, whatever the messages say.
  Exchange x = exchange();
  for (auto& e : x.ends) e.machine = 0;
  formats::Corrections same =
      analysis::merge_clocks({host("a", "boot"), host("a", "boot")}, x.ends, {});
  ASSERT_EQ(same.pairs.size(), 1u);
  EXPECT_EQ(same.pairs[0].method, sync::Method::kSameBoot);
  EXPECT_EQ(sync::map_time(same.hosts[1].map, 123'456'789), 123'456'789);
  analysis::ClockMergeOptions o;
  o.estimate_same_boot = true;
  formats::Corrections est =
      analysis::merge_clocks({host("a", "boot"), host("a", "boot")}, x.ends, o);
  ASSERT_EQ(est.pairs.size(), 1u);
  EXPECT_EQ(est.pairs[0].method, sync::Method::kMessages);
  EXPECT_TRUE(est.estimated);
}
