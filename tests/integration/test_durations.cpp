// Durations: what a function sleeps is in its time, and self time is total
// time minus the time of the traced functions it called. No upper bounds on
// wall-clock times: a loaded machine may be slow, never fast.
#include "tests/integration/fixture.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

constexpr long long kMs = 1000 * 1000;

class Durations : public IntegrationTest {
 protected:
  // target_c 100 with all four functions traced.
  std::optional<nlohmann::json> record_target_c() {
    std::string out = file("durations.data");
    Result r = record(out, "leaf,middle,outer,sleeper", {Paths::target_c, "100", tag_arg()});
    EXPECT_TRUE(r.exited(0)) << r.describe();
    if (!r.exited(0)) return std::nullopt;
    auto rep = report_json(out);
    if (!rep) return std::nullopt;
    for (const char* fn : {"leaf", "middle", "outer", "sleeper"})
      if (find_function(*rep, fn) == nullptr) {
        ADD_FAILURE() << fn << " missing from the report: " << function_names(*rep);
        return std::nullopt;
      }
    return rep;
  }
  static long long field(const nlohmann::json& rep, const char* fn, const char* key) {
    return function_field(rep, fn, key);
  }
};

TEST_F(Durations, SleepIsCounted) {
  auto rep = record_target_c();
  ASSERT_TRUE(rep);
  // sleeper() sleeps 20 ms per call (nanosleep restarts until it has).
  EXPECT_GE(field(*rep, "sleeper", "min_ns"), 20 * kMs);
  EXPECT_GE(field(*rep, "sleeper", "max_ns"), field(*rep, "sleeper", "min_ns"));
  EXPECT_GE(field(*rep, "sleeper", "total_ns"), 3 * 20 * kMs);
  // Nothing traced runs inside it: all its time is its own.
  EXPECT_EQ(field(*rep, "sleeper", "self_ns"), field(*rep, "sleeper", "total_ns"));
}

TEST_F(Durations, SelfExcludesTracedCallees) {
  auto rep = record_target_c();
  ASSERT_TRUE(rep);
  // leaf is called only from middle, middle only from outer: exact identities.
  EXPECT_EQ(field(*rep, "outer", "self_ns"),
            field(*rep, "outer", "total_ns") - field(*rep, "middle", "total_ns"));
  EXPECT_EQ(field(*rep, "middle", "self_ns"),
            field(*rep, "middle", "total_ns") - field(*rep, "leaf", "total_ns"));
  EXPECT_EQ(field(*rep, "leaf", "self_ns"), field(*rep, "leaf", "total_ns"));
  // A caller lasts at least as long as the calls it made.
  EXPECT_GE(field(*rep, "outer", "total_ns"), field(*rep, "middle", "total_ns"));
  EXPECT_GT(field(*rep, "outer", "self_ns"), 0);
}

TEST_F(Durations, StatisticsAreConsistent) {
  auto rep = record_target_c();
  ASSERT_TRUE(rep);
  for (const char* fn : {"leaf", "middle", "outer", "sleeper"}) {
    SCOPED_TRACE(fn);
    long long calls = field(*rep, fn, "calls");
    long long total = field(*rep, fn, "total_ns");
    long long mn = field(*rep, fn, "min_ns");
    long long mx = field(*rep, fn, "max_ns");
    long long avg = field(*rep, fn, "avg_ns");
    ASSERT_GT(calls, 0);
    EXPECT_GT(mn, 0);
    EXPECT_LE(mn, avg);
    EXPECT_LE(avg, mx);
    EXPECT_LE(mn * calls, total);
    EXPECT_GE(mx * calls, total);
    EXPECT_LE(std::llabs(avg - total / calls), 1) << "avg is total / calls";
    EXPECT_LE(field(*rep, fn, "self_ns"), total);
  }
}

}  // namespace
}  // namespace atrace::it
