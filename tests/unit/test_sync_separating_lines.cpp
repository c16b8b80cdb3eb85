// sync/separating_lines.h: the convex hull method on points whose true
// line is known.
#include <gtest/gtest.h>

#include "sync/separating_lines.h"

using namespace atrace::sync;

namespace {
// The true line y = x + 1000 + 10e-6 * x (10 ppm); "above" points lie
// d above it (b->a messages), "below" points d below (a->b).
int64_t truth(int64_t x) { return x + 1000 + x / 100'000; }
PlanePoint at(int64_t x, int64_t d) { return PlanePoint{x, truth(x) + d}; }
}  // namespace

TEST(SyncSeparatingLines, TheTrueLineIsInsideTheBandAndTheDriftBracketed) {
  std::vector<PlanePoint> above{at(0, 100), at(400'000'000, 150), at(1'000'000'000, 100)};
  std::vector<PlanePoint> below{at(100'000'000, -100), at(600'000'000, -120),
                                at(900'000'000, -100)};
  SeparatingLines s(above, below, 1e-3);
  ASSERT_TRUE(s.feasible());
  EXPECT_TRUE(s.drift_bounded());
  EXPECT_LT(s.drift_min(), 10e-6);
  EXPECT_GT(s.drift_max(), 10e-6);
  // Lines through (100e6, -100) and (1e9, +100) and the mirror bound the
  // drift: (200 +- ...)/0.9e9 around 10 ppm.
  EXPECT_NEAR(s.drift_max() - 10e-6, 200.0 / 900'000'000, 1e-12);
  for (int64_t x = 0; x <= 1'000'000'000; x += 50'000'000) {
    auto band = s.band(x);
    long double true_offset = static_cast<long double>(truth(x) - x);
    EXPECT_LE(band.lo, true_offset) << x;
    EXPECT_GE(band.hi, true_offset) << x;
    // Never wider than the two delays (100 + 100) near the points, and
    // not much more between them.
    EXPECT_LE(band.hi - band.lo, 300) << x;
  }
}

TEST(SyncSeparatingLines, OnePointEachWayBoundsTheOffsetButNotTheDrift) {
  SeparatingLines s({at(1'000'000, 50)}, {at(1'000'000, -50)}, 1e-3);
  ASSERT_TRUE(s.feasible());
  EXPECT_FALSE(s.drift_bounded());  // Trace Compass: APPROXIMATE
  EXPECT_DOUBLE_EQ(s.drift_min(), -1e-3);
  EXPECT_DOUBLE_EQ(s.drift_max(), 1e-3);
  auto band = s.band(1'000'000);
  EXPECT_NEAR(static_cast<double>(band.lo), static_cast<double>(truth(1'000'000) - 1'000'000 - 50),
              1e-6);
  EXPECT_NEAR(static_cast<double>(band.hi), static_cast<double>(truth(1'000'000) - 1'000'000 + 50),
              1e-6);
}

TEST(SyncSeparatingLines, CrossingSetsHaveNoLineAndSayByHowMuch) {
  // A b->a message 150 ns "before" the true line between two a->b ones
  // 100 ns after it: every line through the middle is 50 ns off one side.
  SeparatingLines s({at(0, 100), at(500'000'000, -150), at(1'000'000'000, 100)},
                    {at(200'000'000, -100), at(800'000'000, -100)}, 1e-3);
  EXPECT_FALSE(s.feasible());
  EXPECT_NEAR(s.overlap_ns(), 50, 1e-6);
}
