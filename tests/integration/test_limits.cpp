// Honest reports past the kernel's limits (issue 29, docs/safety.md):
// calls nested deeper than the kernel's 64 return probes per thread are
// counted and marked "not timed", never unfinished, never given a made-up
// duration, and the exits that do fire are paired with their own entries;
// calls left by siglongjmp from a signal handler are closed where their
// thread was next seen below them, as abandoned. Exact counts; durations
// are held to what the target measured around the same calls.
#include "tests/integration/fixture.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

constexpr long long kMs = 1000 * 1000;

// "key=N" from a target's output, -1 when absent.
long long printed(const std::string& out, const std::string& key) {
  const size_t at = out.find(key + "=");
  if (at == std::string::npos) return -1;
  return std::stoll(out.substr(at + key.size() + 1));
}

class Limits : public IntegrationTest {};

// recurse(200) in 2 threads, 50 descents each: 201 nested calls a descent,
// of which the kernel gives return probes to the outer 64 only.
TEST_F(Limits, RecursionPastTheNestingLimitIsCountedNotTimed) {
  const std::string out = file("recurse.atrace");
  // Exact counts: no relevance filter.
  Result r = record(out, "recurse", {Paths::target_limits, "recurse", "200", "50", "2", tag_arg()},
                    {"--filter=off"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  ASSERT_EQ(printed(r.out, "calls"), 20100) << r.out;
  const long long descent_max = printed(r.out, "descent_max_ns");
  ASSERT_GT(descent_max, 0) << r.out;

  auto rep = report_json(out);
  ASSERT_TRUE(rep);
  EXPECT_EQ(calls_of(*rep, "recurse"), 20100);
  EXPECT_EQ(function_field(*rep, "recurse", "untimed"), 2 * 50 * (201 - 64));
  EXPECT_EQ(function_field(*rep, "recurse", "unfinished"), 0);
  EXPECT_EQ(function_field(*rep, "recurse", "abandoned"), 0);
  EXPECT_EQ((*rep)["orphan_exits"], 0);
  // Every timed call has the innermost one's 1 ms spin inside it, and none
  // lasts longer than the descent the target measured around it (a call
  // paired with a wrong exit, or closed at its thread's end, would).
  EXPECT_GE(function_field(*rep, "recurse", "min_ns"), 1 * kMs);
  EXPECT_LE(function_field(*rep, "recurse", "max_ns"), descent_max);
  // Total: the outermost activations, 100 of them, each within a descent.
  EXPECT_LE(function_field(*rep, "recurse", "total_ns"), 100 * descent_max);

  // The text report says why, where the number is shown.
  Result text = run({Paths::atrace, "report", "-i", out});
  ASSERT_TRUE(text.exited(0)) << text.describe();
  EXPECT_NE(text.out.find("20100 (13700 not timed: past the kernel's 64 nested return probes)"),
            std::string::npos)
      << text.out;
  EXPECT_EQ(text.out.find("unfinished"), std::string::npos) << text.out;
}

// 40 rounds: a 1 ms timer's handler siglongjmps out of inner() and outer();
// after() then returns normally from where outer() was called.
TEST_F(Limits, SiglongjmpFromASignalHandlerAbandonsCallsWhereTheyWereLeft) {
  const std::string out = file("sigjump.atrace");
  Result r = record(out, "outer,inner,after", {Paths::target_limits, "sigjump", "40", tag_arg()},
                    {"--filter=off"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  ASSERT_EQ(printed(r.out, "rounds"), 40) << r.out;
  const long long round_max = printed(r.out, "round_max_ns");
  ASSERT_GT(round_max, 0) << r.out;

  auto rep = report_json(out);
  ASSERT_TRUE(rep);
  for (const char* fn : {"outer", "inner"}) {
    EXPECT_EQ(calls_of(*rep, fn), 40) << fn;
    EXPECT_EQ(function_field(*rep, fn, "abandoned"), 40) << fn;
    EXPECT_EQ(function_field(*rep, fn, "unfinished"), 0) << fn;
    // Closed where they were left: within the round the target measured,
    // not at the end of the recording.
    EXPECT_LE(function_field(*rep, fn, "max_ns"), round_max) << fn;
  }
  EXPECT_EQ(calls_of(*rep, "after"), 40);
  EXPECT_EQ(function_field(*rep, "after", "abandoned"), 0);
  EXPECT_EQ((*rep)["orphan_exits"], 0);

  Result text = run({Paths::atrace, "report", "-i", out});
  ASSERT_TRUE(text.exited(0)) << text.describe();
  EXPECT_NE(text.out.find("40 (40 abandoned)"), std::string::npos) << text.out;
}

}  // namespace
}  // namespace atrace::it
