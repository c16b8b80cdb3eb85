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
