// A recorded file read back: `atrace info` shows its header, the text report
// lists the functions in the order asked for.
#include <regex>

#include "tests/integration/fixture.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

class ReadBack : public IntegrationTest {
 protected:
  void SetUp() override {
    IntegrationTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    trace_ = file("readback.data");
    // leaf 30, middle 10, sleeper 3, outer 1: distinct orders by calls and by name.
    target_ = record(trace_, "leaf,middle,outer,sleeper", {Paths::target_c, "10", tag_arg()});
    ASSERT_TRUE(target_.exited(0)) << target_.describe();
  }

  // Positions of the names in a text report, in the given order.
  static void expect_order(const std::string& text, const std::vector<std::string>& names) {
    size_t last = 0;
    for (size_t i = 0; i < names.size(); ++i) {
      size_t at = text.find(names[i]);
      ASSERT_NE(at, std::string::npos) << names[i] << " missing from\n" << text;
      if (i > 0) {
        EXPECT_GT(at, last) << names[i] << " before " << names[i - 1] << " in\n" << text;
      }
      last = at;
    }
  }

  std::string trace_;
  Result target_;
};

TEST_F(ReadBack, InfoShowsPidAndProbes) {
  Result r = run({Paths::atrace, "info", "-i", trace_});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  auto pid = printed_count(target_.out, "pid");
  ASSERT_TRUE(pid);
  EXPECT_TRUE(std::regex_search(
      r.out, std::regex("pid\\D{0,20}\\b" + std::to_string(*pid) + "\\b", std::regex::icase)))
      << "pid " << *pid << " not shown:\n"
      << r.out;
  // "probes: 4", "4 probes", "Probes (4)": a line that counts the four probes.
  EXPECT_TRUE(std::regex_search(
      r.out, std::regex("probes?[^0-9\\n]{0,20}\\b4\\b|\\b4\\s+probes?", std::regex::icase)))
      << "probe count 4 not shown:\n"
      << r.out;
  for (const char* fn : {"leaf", "middle", "outer", "sleeper"})
    EXPECT_NE(r.out.find(fn), std::string::npos) << fn << " not in the probe list:\n" << r.out;
  EXPECT_NE(r.out.find("target_c"), std::string::npos) << "command line not shown:\n" << r.out;
}

TEST_F(ReadBack, TextReportSortsByTotalByDefault) {
  Result r = run({Paths::atrace, "report", "-i", trace_});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  // sleeper (3 x 20 ms) outlasts outer (a few microseconds of loops) by far.
  expect_order(r.out, {"sleeper", "outer"});
}

TEST_F(ReadBack, TextReportSortsByCalls) {
  Result r = run({Paths::atrace, "report", "-i", trace_, "--sort=calls"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  expect_order(r.out, {"leaf", "middle", "sleeper", "outer"});
}

TEST_F(ReadBack, TextReportSortsByName) {
  Result r = run({Paths::atrace, "report", "-i", trace_, "--sort=name"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  expect_order(r.out, {"leaf", "middle", "outer", "sleeper"});
}

TEST_F(ReadBack, TextReportByThread) {
  Result r = run({Paths::atrace, "report", "-i", trace_, "--threads"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  auto pid = printed_count(target_.out, "pid");
  ASSERT_TRUE(pid);
  // Single-threaded target: its one thread has the pid as tid.
  EXPECT_NE(r.out.find(std::to_string(*pid)), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("leaf"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace atrace::it
