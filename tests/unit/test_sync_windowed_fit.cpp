// sync/windowed_fit.h: one host pair from its messages, window by window.
#include <gtest/gtest.h>

#include "sync/simulate.h"
#include "sync/windowed_fit.h"

using namespace atrace::sync;

namespace {
// b's clock = a's clock * (1 - 20 ppm) - 3 s; messages every 10 ms both
// ways with delays a->b 50 us, b->a 80 us (+ a 0..9 us pattern).
struct TwoClocks {
  static int64_t b_of(int64_t a) { return a - a / 50'000 - 3'000'000'000; }
  std::vector<MessageSample> ab, ba;
  TwoClocks() {
    for (int64_t t = 5'000'000'000, i = 0; t < 35'000'000'000; t += 10'000'000, ++i) {
      ab.push_back(MessageSample{t, b_of(t + 50'000 + (i % 10) * 1'000)});
      ba.push_back(MessageSample{b_of(t + 5'000'000), t + 5'000'000 + 80'000 + (i % 7) * 1'000});
    }
  }
};
}  // namespace

TEST(SyncWindowedFit, FindsOffsetAndDriftWithinHalfTheDelaysAndSaysSo) {
  TwoClocks c;
  SyncOptions o;
  auto e = fit_messages(0, 1, c.ab, c.ba, o);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->report.method, Method::kMessages);
  EXPECT_EQ(e->report.quality, Quality::kAccurate);
  EXPECT_EQ(e->report.messages, c.ab.size() + c.ba.size());
  EXPECT_EQ(e->report.windows, 3u);  // 30 s in windows of 10 s
  // a = b + 3 s (+ 20 ppm of it): the map from b to a.
  EXPECT_NEAR(e->report.drift_ppm, 20.0, 0.05);
  // The delays are 50 and 80 us: the truth is known to within their half
  // sum, and the estimate is in the middle of what is possible.
  for (int64_t a = 5'000'000'000; a < 35'000'000'000; a += 777'777'777) {
    int64_t err = map_time(e->b_to_a, TwoClocks::b_of(a)) - a;
    EXPECT_LE(std::abs(err), 65'000) << a;
    EXPECT_LE(std::abs(err), bound_at(e->b_to_a, TwoClocks::b_of(a))) << a;
  }
  // Half the delays' sum (65 us) plus what the jitter and the rate
  // margin add to the rate-bounded band (a few us).
  EXPECT_LE(e->report.bound_ns, 72'000);
  EXPECT_GE(e->report.bound_ns, 65'000);
}

// A relation that bends inside a window: b's rate changes by 15 ppm at
// 20 s, mid-window (windows of 10 s from 5 s). No line fits it exactly;
// the messages' delays hide the bend. The stated bounds must still hold.
TEST(SyncWindowedFit, ARateChangeInsideAWindowStaysInsideTheBound) {
  auto b_of = [](int64_t a) {
    const int64_t bend = 20'000'000'000;
    int64_t b = a - a / 50'000 - 3'000'000'000;
    if (a > bend) b -= (a - bend) / 25'000;  // 40 ppm slower after it
    return b;
  };
  std::vector<MessageSample> ab, ba;
  for (int64_t t = 5'000'000'000, i = 0; t < 35'000'000'000; t += 10'000'000, ++i) {
    ab.push_back(MessageSample{t, b_of(t + 50'000 + (i % 10) * 1'000)});
    ba.push_back(MessageSample{b_of(t + 5'000'000), t + 5'000'000 + 80'000 + (i % 7) * 1'000});
  }
  auto e = fit_messages(0, 1, ab, ba, SyncOptions{});
  ASSERT_TRUE(e.has_value());
  for (int64_t a = 5'000'000'000; a < 35'000'000'000; a += 1'000'000) {
    int64_t err = map_time(e->b_to_a, b_of(a)) - a;
    ASSERT_LE(std::abs(err), bound_at(e->b_to_a, b_of(a))) << "at " << a;
  }
}

TEST(SyncWindowedFit, MessagesOneWayOnlyGiveNothing) {
  TwoClocks c;
  EXPECT_FALSE(fit_messages(0, 1, c.ab, {}, SyncOptions{}).has_value());
  EXPECT_FALSE(fit_messages(0, 1, {}, c.ba, SyncOptions{}).has_value());
}

// NTP changes a clock's rate mid-run: windows follow it, a single line
// over the run cannot.
TEST(SyncWindowedFit, FollowsARateChangeThatOneLineCannot) {
  SimOptions so;
  so.hosts = 2;
  so.seed = 7;
  so.duration_ns = 60'000'000'000;
  so.slew_at_ns = 30'000'000'000;
  so.slew_ppm = 20;
  so.max_delay_ns = 200'000;  // minimum delays of 20..100 us: a bend shows
  Simulation sim = simulate(so);
  const auto& ab = samples(sim, 0, 1);
  const auto& ba = samples(sim, 1, 0);
  int64_t allowed = (sim.min_delay_ns.at({0, 1}) + sim.min_delay_ns.at({1, 0})) / 2;

  auto windowed = fit_messages(0, 1, ab, ba, SyncOptions{});
  ASSERT_TRUE(windowed.has_value());
  EXPECT_NE(windowed->report.quality, Quality::kFail);
  int64_t windowed_error = pair_error(sim, 0, 1, windowed->b_to_a);
  EXPECT_LE(windowed_error, allowed);

  SyncOptions one_line;
  one_line.window_ns = 1'000'000'000'000;
  one_line.min_window_ns = one_line.window_ns;  // no halving either
  auto single = fit_messages(0, 1, ab, ba, one_line);
  ASSERT_TRUE(single.has_value());
  EXPECT_EQ(single->report.windows, 1u);
  // Rates 10..20 ppm apart over 30 s: about 40..75 us off at the ends
  // and the middle, which the messages contradict (no line fits).
  EXPECT_EQ(single->report.quality, Quality::kFail);
  EXPECT_GT(pair_error(sim, 0, 1, single->b_to_a), 3 * windowed_error);
}
