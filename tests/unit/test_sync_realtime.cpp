// sync/realtime_rendezvous.h and the choice of method per pair
// (synchronize.h): REALTIME where nothing was exchanged, offset 0 on one
// boot.
#include <gtest/gtest.h>

#include "sync/realtime_rendezvous.h"
#include "sync/synchronize.h"

using namespace atrace::sync;

namespace {
// A snapshot at MONOTONIC mono whose REALTIME reads real, bracket 2 us.
ClockSnapshot snap(int64_t mono, int64_t real, int64_t maxerror_us, bool unsync = false) {
  return ClockSnapshot{mono - 1'000, real, mono + 1'000, maxerror_us, maxerror_us / 2, unsync};
}
constexpr int64_t kEpoch = 1'790'000'000'000'000'000;
}  // namespace

TEST(SyncRealtime, MeetsThroughRealtimeWithBothKernelsErrorsAsTheBound) {
  // a booted 100 s before REALTIME kEpoch, b 40 s before: a = b + 60 s.
  HostClock a{"a", "boot-a", {}}, b{"b", "boot-b", {}};
  for (int64_t s = 0; s < 5; ++s) {
    a.snapshots.push_back(
        snap(100'000'000'000 + s * 1'000'000'000, kEpoch + s * 1'000'000'000, 300));
    b.snapshots.push_back(
        snap(40'500'000'000 + s * 1'000'000'000, kEpoch + 500'000'000 + s * 1'000'000'000, 200));
  }
  auto e = fit_realtime(0, a, 1, b);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->report.method, Method::kRealtime);
  EXPECT_EQ(e->report.quality, Quality::kApproximate);
  EXPECT_EQ(e->report.offset_ns, 60'000'000'000);
  EXPECT_NEAR(e->report.drift_ppm, 0, 1e-9);
  // 300 us + 200 us of maxerror, two brackets of 2 us.
  EXPECT_EQ(e->report.bound_ns, 500'000 + 4'000);
  EXPECT_EQ(map_time(e->b_to_a, 41'234'567'890), 101'234'567'890);
}

TEST(SyncRealtime, AnUnsynchronisedClockIsAFailAndNoSnapshotsNothing) {
  HostClock a{"a", "x", {snap(1'000, kEpoch, 16'000'000, true)}};
  HostClock b{"b", "y", {snap(5'000, kEpoch, 100)}};
  auto e = fit_realtime(0, a, 1, b);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->report.quality, Quality::kFail);
  EXPECT_FALSE(fit_realtime(0, a, 1, HostClock{"c", "z", {}}).has_value());
}

TEST(SyncRealtime, OneBootMeansOffsetZeroUnlessAskedToEstimate) {
  SyncInput in;
  in.hosts = {HostClock{"h", "same", {snap(1'000'000, kEpoch, 100)}},
              HostClock{"h", "same", {snap(1'000'000, kEpoch + 700'000, 100)}}};
  SyncResult r = synchronize(in);
  ASSERT_EQ(r.pairs.size(), 1u);
  EXPECT_EQ(r.pairs[0].method, Method::kSameBoot);
  EXPECT_EQ(r.pairs[0].offset_ns, 0);
  EXPECT_EQ(r.pairs[0].bound_ns, 0);
  EXPECT_EQ(map_time(r.hosts[1].segments, 123), 123);

  in.options.estimate_same_boot = true;
  r = synchronize(in);
  ASSERT_EQ(r.pairs.size(), 1u);
  EXPECT_EQ(r.pairs[0].method, Method::kRealtime);
  EXPECT_EQ(r.pairs[0].offset_ns, 700'000);  // what the (made up) REALTIMEs say
  EXPECT_STREQ(method_name(r.pairs[0].method), "realtime");
  EXPECT_STREQ(quality_name(r.pairs[0].quality), "APPROXIMATE");
}
