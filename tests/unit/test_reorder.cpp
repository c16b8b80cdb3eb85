// Reorderer: events from several CPUs' rings come back in time order, held
// back until the cutoff passes them.
#include <gtest/gtest.h>

#include "record/reorder.h"

using atrace::Reorderer;
using atrace::formats::Event;
using atrace::formats::EventKind;

namespace {
Event ev(uint64_t ts, uint32_t tid, EventKind k = EventKind::FuncEntry, uint32_t id = 1) {
  Event e;
  e.ts = ts;
  e.tid = tid;
  e.pid = 1;
  e.id = id;
  e.kind = k;
  return e;
}
}  // namespace

TEST(Reorderer, ReleasesOnlyUpToCutoffInTimeOrder) {
  Reorderer r;
  // CPU 0's ring drained first, then CPU 1's: interleaved in time.
  r.push(ev(10, 1));
  r.push(ev(30, 1));
  r.push(ev(50, 1));
  r.push(ev(20, 2));
  r.push(ev(40, 2));
  auto out = r.take_until(35);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].ts, 10u);
  EXPECT_EQ(out[1].ts, 20u);
  EXPECT_EQ(out[2].ts, 30u);
  auto rest = r.take_all();
  ASSERT_EQ(rest.size(), 2u);
  EXPECT_EQ(rest[0].ts, 40u);
  EXPECT_EQ(rest[1].ts, 50u);
  EXPECT_TRUE(r.take_all().empty());
  EXPECT_EQ(r.late(), 0u);
}

TEST(Reorderer, EqualTimestampsKeepArrivalOrder) {
  Reorderer r;
  r.push(ev(100, 7, EventKind::FuncEntry));
  r.push(ev(100, 7, EventKind::FuncExit));
  auto out = r.take_all();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].kind, EventKind::FuncEntry);
  EXPECT_EQ(out[1].kind, EventKind::FuncExit);
}

TEST(Reorderer, CountsEventsArrivingAfterTheirTimeWasReleased) {
  Reorderer r;
  r.push(ev(10, 1));
  EXPECT_EQ(r.take_until(100).size(), 1u);
  r.push(ev(90, 2));  // older than the released cutoff
  r.push(ev(150, 2));
  EXPECT_EQ(r.late(), 1u);
  EXPECT_EQ(r.take_all().size(), 2u);
}

// Events wait across several drains while later ones arrive from two rings:
// every take is in time order, nothing is lost or repeated, and a held event
// found by find_held is the one taken out later (its address is stable).
TEST(Reorderer, ManyDrainsReleaseEveryEventOnceInOrder) {
  Reorderer r;
  uint64_t next_ts[2] = {1, 2};
  std::vector<uint64_t> all;
  uint64_t cut;
  for (int drain = 0; drain < 50; ++drain) {
    for (int cpu = 0; cpu < 2; ++cpu)
      for (int i = 0; i < 100; ++i) {
        r.push(ev(next_ts[cpu], static_cast<uint32_t>(cpu + 1)));
        next_ts[cpu] += 2;
      }
    Event* held = r.find_held(1, next_ts[0] - 2, EventKind::FuncEntry, 1);
    ASSERT_NE(held, nullptr);
    held->arg0 = 77;                                     // completed in place, as func_values does
    cut = 200u * static_cast<uint64_t>(drain + 1) - 50;  // the newest 50 stay
    for (auto& e : r.take_until(cut)) all.push_back(e.ts * 1000 + e.arg0);
    EXPECT_EQ(r.held(), 50u);
  }
  for (auto& e : r.take_all()) all.push_back(e.ts * 1000 + e.arg0);
  ASSERT_EQ(all.size(), 50u * 200u);
  for (size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i] / 1000, i + 1);
  size_t completed = 0;
  for (uint64_t v : all) completed += v % 1000 == 77;
  EXPECT_EQ(completed, 50u);
  EXPECT_EQ(r.late(), 0u);
}

TEST(Reorderer, FindHeldSkipsEventsAlreadyTaken) {
  Reorderer r;
  r.push(ev(10, 1));
  r.push(ev(20, 1));
  EXPECT_EQ(r.take_until(10).size(), 1u);
  EXPECT_EQ(r.find_held(1, 10, EventKind::FuncEntry, 1), nullptr);
  EXPECT_NE(r.find_held(1, 20, EventKind::FuncEntry, 1), nullptr);
}
