// TSC -> CLOCK_MONOTONIC: the map on pairs of known numbers, the refusal,
// and properties (never timings) on this machine's clocks.
#include <gtest/gtest.h>

#include <ctime>

#include "fastpath/tsc_clock.h"

namespace atrace::fastpath {
namespace {

TEST(FastPathTscClock, InterpolatesBetweenAnchorsExactly) {
  TscClock c;
  c.add({1000, 500, 1002});  // middle 1001 -> 500 ns
  EXPECT_FALSE(c.ready());
  c.add({3000, 1500, 3002});  // middle 3001 -> 1500: 2 ticks a ns
  ASSERT_TRUE(c.ready());
  EXPECT_EQ(c.to_ns(1001), 500u);
  EXPECT_EQ(c.to_ns(2001), 1000u);
  EXPECT_EQ(c.to_ns(2002), 1000u);  // 1000.5, rounded down
  EXPECT_EQ(c.to_ns(3001), 1500u);
  EXPECT_EQ(c.to_ns(4001), 2000u);  // past the last anchor: its segment's rate
  EXPECT_EQ(c.to_ns(1), 0u);        // before the first: the first segment's
  EXPECT_EQ(c.to_ns(0), 0u);        // -0.5 ns: held at 0
  EXPECT_EQ(c.ticks(1000), 2000u);

  // A third anchor where CLOCK_MONOTONIC ran faster (slewed): 1100 ns over
  // the next 2000 ticks. The new pair is 100 ns from the old extrapolation.
  c.add({5000, 2600, 5002});
  EXPECT_EQ(c.to_ns(4001), 2050u);
  EXPECT_EQ(c.to_ns(5001), 2600u);
  EXPECT_EQ(c.to_ns(2001), 1000u) << "a segment never changes once its end is in";
  EXPECT_EQ(c.ticks(1100), 2000u);
  const ConversionError e = c.error();
  EXPECT_EQ(e.residual_ns, 100u);
  EXPECT_EQ(e.checked, 1u);
  EXPECT_EQ(e.bracket_ns, 1u);  // 2 ticks at 2100 ns / 4000 ticks
}

TEST(FastPathTscClock, IgnoresPairsThatDoNotGoForward) {
  TscClock c;
  c.add({1000, 500, 1002});
  c.add({900, 600, 902});    // TSC back
  c.add({2000, 500, 2002});  // clock not forward
  c.add({3000, 400, 2990});  // inverted bracket
  EXPECT_EQ(c.anchors(), 1u);
}

TEST(FastPathTscClock, KeepsAnchorsForItsWindowOnly) {
  TscClock c(/*keep_ns=*/1000);
  for (uint64_t i = 0; i < 10; ++i) c.add({i * 1000, i * 500, i * 1000});
  // Anchors 500 ns apart: the newest, the one less than 1000 ns before it,
  // and the one before that (it bounds the oldest segment kept).
  EXPECT_EQ(c.anchors(), 3u);
  EXPECT_EQ(c.to_ns(9000), 4500u);
  EXPECT_EQ(c.to_ns(6500), 3250u);
}

// A backlog of records older than the window, read over many drains: the
// anchors it falls between stay while it is still to come, so a time
// stamp converts the same at the last drain as at the first. Dropped
// (the window counted from the newest anchor alone), the stamps of the
// backlog were extrapolated from a later segment, differently at each
// drain: two records of one thread, 35-60 ns apart in true time and read
// in two drains, came out 6-9 ns in the wrong order.
TEST(FastPathTscClock, KeepsTheAnchorsOfStampsStillToCome) {
  TscClock c(/*keep_ns=*/1000);
  // Anchors at a rate that changes: extrapolating a later segment back
  // over an earlier one gives another answer.
  c.add({0, 0, 0});
  c.add({1000, 500, 1000});
  c.add({2000, 1100, 2000});
  const uint64_t backlog = 1500;  // still in the lanes
  c.hold(backlog);
  const uint64_t first = c.to_ns(backlog);
  for (uint64_t i = 3; i < 40; ++i) c.add({i * 1000, 1100 + (i - 2) * 500, i * 1000});
  EXPECT_EQ(c.to_ns(backlog), first);
  EXPECT_EQ(c.to_ns(1600), 860u);  // on the segment it falls in
  // The backlog read: the window counts from the newest again.
  c.hold(UINT64_MAX);
  c.add({40000, 1100 + 38 * 500, 40000});
  EXPECT_EQ(c.anchors(), 3u);
}

TEST(FastPathTscClock, RefusesATscThatDoesNotTickSteadily) {
  const char* good =
      "processor\t: 0\nflags\t\t: fpu tsc rdtscp constant_tsc nonstop_tsc pni\n\n"
      "processor\t: 1\nflags\t\t: fpu tsc rdtscp constant_tsc nonstop_tsc pni\n";
  EXPECT_EQ(tsc_refusal(good), "");
  EXPECT_NE(tsc_refusal("processor\t: 0\nflags\t\t: fpu tsc rdtscp nonstop_tsc\n")
                .find("lacks constant_tsc"),
            std::string::npos);
  EXPECT_NE(tsc_refusal("processor\t: 0\nflags\t\t: fpu tsc rdtscp constant_tsc\n")
                .find("lacks nonstop_tsc"),
            std::string::npos);
  EXPECT_NE(tsc_refusal("processor\t: 0\nflags\t\t: constant_tsc nonstop_tsc\n").find("rdtscp"),
            std::string::npos);
  // A flag's name inside another word is not the flag.
  EXPECT_NE(tsc_refusal("flags\t: rdtscp xconstant_tsc nonstop_tsc\n"), "");
  EXPECT_NE(tsc_refusal(""), "");
}

// On this machine's clocks (skipped where the TSC is refused): the map
// between two anchors puts each pair read between them inside its own
// bracket, give or take the anchors' own error, and is monotonic.
TEST(FastPathTscClock, RealPairsFallInsideTheirBracket) {
  if (std::string why = tsc_refusal(); !why.empty()) GTEST_SKIP() << why;
  TscClock c;
  c.refresh();
  std::vector<ClockPair> pairs;
  for (int i = 0; i < 200; ++i) {
    pairs.push_back(read_pair());
    timespec ts{0, 20'000};
    nanosleep(&ts, nullptr);
  }
  c.refresh();
  ASSERT_TRUE(c.ready());
  // The anchors' half brackets, plus CLOCK_MONOTONIC's largest slew
  // (500 ppm, adjtimex's bound) over the span between them.
  const uint64_t span = c.to_ns(pairs.back().after) - c.to_ns(pairs.front().before);
  const uint64_t tolerance = c.error().bracket_ns + span / 2000 + 1;
  uint64_t last = 0;
  for (const ClockPair& p : pairs) {
    const uint64_t lo = c.to_ns(p.before), hi = c.to_ns(p.after);
    EXPECT_LE(lo, hi);
    EXPECT_GE(lo, last);
    last = hi;
    EXPECT_LE(lo, p.ns + tolerance);
    EXPECT_GE(hi + tolerance, p.ns);
  }
}

}  // namespace
}  // namespace atrace::fastpath
