// The harness itself: a hung command is killed at its timeout and the result
// says where each of its processes was stuck.
#include <gtest/gtest.h>

#include "tests/integration/run.h"

namespace atrace::it {
namespace {

TEST(Harness, TimeoutKillsAndReportsWhereItHung) {
  Result r = run({"/bin/sh", "-c", "sleep 30 & sleep 30"}, std::chrono::milliseconds(300));
  EXPECT_TRUE(r.timed_out);
  EXPECT_NE(r.hang_report.find("(sleep)"), std::string::npos) << r.hang_report;
  EXPECT_NE(r.describe().find("processes at the timeout"), std::string::npos);
}

}  // namespace
}  // namespace atrace::it
