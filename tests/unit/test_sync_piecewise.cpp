// sync/piecewise.h: the clock maps every correction is made of.
#include <gtest/gtest.h>

#include "sync/piecewise.h"

using namespace atrace::sync;

TEST(SyncPiecewise, KnotsGiveAStraightMapBetweenThemAndContinuePastTheEnds) {
  // 10 s offset, then 20 ppm faster from x = 1e9 on.
  Segments m = from_knots(
      {{0, 10'000'000'000}, {1'000'000'000, 11'000'000'000}, {2'000'000'000, 12'000'020'000}},
      {5, 7});
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(map_time(m, 0), 10'000'000'000);
  EXPECT_EQ(map_time(m, 500'000'000), 10'500'000'000);
  EXPECT_EQ(map_time(m, 1'500'000'000), 11'500'010'000);
  EXPECT_EQ(map_time(m, 3'000'000'000), 13'000'040'000);  // past the last knot: same slope
  EXPECT_EQ(map_time(m, -1'000'000'000), 9'000'000'000);  // before the first
  EXPECT_NEAR(m[1].drift_ppm, 20.0, 1e-9);
  EXPECT_EQ(bound_at(m, 100), 5);
  EXPECT_EQ(bound_at(m, 1'500'000'000), 7);
}

TEST(SyncPiecewise, InverseUndoesTheMapToTheNanosecond) {
  Segments m = from_knots(
      {{1'000, 5'000'001'000}, {10'000'001'000, 15'000'301'000}, {20'000'001'000, 24'999'901'000}});
  Segments inv = invert(m);
  for (int64_t x : {int64_t{0}, int64_t{1'000}, int64_t{7'777'777'777}, int64_t{10'000'001'000},
                    int64_t{19'999'999'999}, int64_t{40'000'000'000}})
    EXPECT_NEAR(static_cast<double>(map_time(inv, map_time(m, x))), static_cast<double>(x), 1.0)
        << x;
}

TEST(SyncPiecewise, ComposeAppliesInnerThenOuterAndAddsTheBounds) {
  Segments inner = from_knots(
      {{0, 100}, {1'000'000'000, 1'000'050'100}, {2'000'000'000, 1'999'990'100}}, {3, 4});
  Segments outer = from_knots({{500'000'000, 400'000'000}, {1'500'000'000, 1'400'010'000}}, {10});
  Segments both = compose(outer, inner);
  for (int64_t x = -500'000'000; x <= 3'000'000'000; x += 123'456'789)
    EXPECT_NEAR(static_cast<double>(map_time(both, x)),
                static_cast<double>(map_time(outer, map_time(inner, x))), 1.0)
        << x;
  EXPECT_EQ(bound_at(both, 10), 13);
  EXPECT_EQ(bound_at(both, 1'500'000'000), 14);
}

TEST(SyncPiecewise, IdentityLeavesTimesAlone) {
  Segments id = identity_map();
  EXPECT_EQ(map_time(id, 123'456'789'012), 123'456'789'012);
  EXPECT_EQ(bound_at(id, 0), 0);
}
