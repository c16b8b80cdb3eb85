// Both ways of attaching (uprobe_multi links, perf-event links) record the
// same exact counts, across the executable and a shared library at once. On
// a kernel without uprobe_multi links (before 6.6), --attach=multi is one
// clear error instead (tests/kernels/run.sh runs these on such kernels).
#include "record/features.h"
#include "tests/integration/fixture.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

class AttachModes : public IntegrationTest, public ::testing::WithParamInterface<const char*> {
 protected:
  // False when the mode cannot work on this kernel: then `r` must be the
  // one error line naming the missing links.
  bool mode_works(const Result& r) {
    if (std::string(GetParam()) != "multi" || detect_kernel_features().uprobe_multi) return true;
    EXPECT_NE(expect_one_error_line(r).find("no uprobe_multi links"), std::string::npos);
    return false;
  }
};

TEST_P(AttachModes, ExactCountsInExecutableAndLibrary) {
  std::string out = file("modes.data");
  Result r = record(out, "main,libtarget_shared.so:shared_fn", {Paths::target_lib, "40", tag_arg()},
                    {std::string("--attach=") + GetParam()});
  if (!mode_works(r)) return;
  ASSERT_TRUE(r.exited(0)) << r.describe();
  auto rep = report_json(out);
  ASSERT_TRUE(rep);
  EXPECT_EQ((*rep)["lost_events"], 0);
  EXPECT_EQ(calls_of(*rep, "shared_fn"), 40) << function_names(*rep);
  EXPECT_EQ(calls_of(*rep, "main"), 1) << function_names(*rep);
  EXPECT_EQ(printed_count(r.out, "shared_fn").value_or(-1), 40) << r.describe();
}

TEST_P(AttachModes, ThreadsCreatedAfterAttachAreTraced) {
  std::string out = file("threads.data");
  Result r = record(out, "worker_step", {Paths::target_threads, "250", tag_arg()},
                    {std::string("--attach=") + GetParam(), "--filter-min-calls=1000"});
  if (!mode_works(r)) return;
  ASSERT_TRUE(r.exited(0)) << r.describe();
  auto rep = report_json(out);
  ASSERT_TRUE(rep);
  EXPECT_EQ((*rep)["lost_events"], 0);
  EXPECT_EQ(calls_of(*rep, "worker_step"), 4 * 250);
}

// Every function of libc at once: thousands of probes in a few links, one of
// which the kernel refuses (on Debian 12's libc, pthread_spin_lock's first
// instruction): the rest must still be attached and counted exactly.
class AttachAtScale : public IntegrationTest {};

TEST_F(AttachAtScale, WholeLibcWithOneUnprobeableFunction) {
  std::string out = file("libc.data");
  Result r = record(out, "libc.so.6:*", {Paths::target_c, "10", tag_arg()});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  auto rep = report_json(out);
  ASSERT_TRUE(rep);
  EXPECT_EQ((*rep)["lost_events"], 0);
  EXPECT_EQ(calls_of(*rep, "clock_nanosleep"), 3) << function_names(*rep);  // sleeper() x3
  EXPECT_GT((*rep)["functions"].size(), 20u);
}

INSTANTIATE_TEST_SUITE_P(Integration, AttachModes, ::testing::Values("multi", "perf"));

}  // namespace
}  // namespace atrace::it
