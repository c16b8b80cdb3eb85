// The fast path on a C program that loads libgcc_s.so.1 only at its first
// backtrace() or pthread_exit, after the install (issue 35): that unwinder
// is not patched, so glibc's backtrace() takes the walk's trampolines
// (its entry disarms the frames, its rets re-arm them), and pthread_exit
// goes through libc's own patched _Unwind_ForcedUnwind (record/fast_path.cpp).
// The program computes what it computes untraced; every call is timed or
// counted unwound.
#include "tests/integration/fixture.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

constexpr const char* kTarget = TARGET_FASTPATH_LATE_UNWINDER_BIN;

class FastPathLateUnwinder : public IntegrationTest {
 protected:
  // The target's output untraced and with --fast-path (the same), and the
  // report of the recording.
  std::optional<nlohmann::json> traced(const std::string& mode, const std::string& n,
                                       const std::string& select) {
    const std::vector<std::string> cmd = {kTarget, mode, n, tag_arg()};
    Result ref = run(cmd);
    EXPECT_TRUE(ref.exited(0)) << ref.describe();
    // Else the unwinder would be patched at the install: not this case.
    EXPECT_NE(ref.out.find("libgcc_s mapped at start: no\n"), std::string::npos) << ref.out;
    const std::string out = file(mode + ".atrace");
    Result r = record(out, select, cmd, {"--fast-path", "--filter=off"});
    EXPECT_TRUE(r.exited(0)) << r.describe();
    EXPECT_EQ(r.out, ref.out) << "the program computed something else traced";
    auto rep = report_json(out);
    if (rep) {
      EXPECT_EQ((*rep)["lost_events"], 0);
      EXPECT_EQ((*rep)["orphan_exits"], 0);
    }
    return rep;
  }
};

// Untraced, backtrace() finds 6 frames; an unpatched unwinder meeting the
// return stub found 2. Every call open across a backtrace() is timed.
TEST_F(FastPathLateUnwinder, BacktraceFindsEveryFrame) {
  auto rep = traced("backtrace", "10", "bt_outer,bt_mid,bt_leaf");
  ASSERT_TRUE(rep);
  for (const char* f : {"bt_outer", "bt_mid", "bt_leaf"}) {
    SCOPED_TRACE(f);
    EXPECT_EQ(calls_of(*rep, f), 10);
    EXPECT_EQ(function_field(*rep, f, "untimed"), 0);
    EXPECT_EQ(function_field(*rep, f, "unfinished"), 0);
  }
}

// pthread_exit and cancellation two hooked frames down, 5 times each:
// every call is unwound with its thread.
TEST_F(FastPathLateUnwinder, ThreadsExitAndAreCancelledInsideHookedCalls) {
  auto rep = traced("exit", "5", "ex_outer,ex_inner");
  ASSERT_TRUE(rep);
  for (const char* f : {"ex_outer", "ex_inner"}) {
    SCOPED_TRACE(f);
    EXPECT_EQ(calls_of(*rep, f), 10);
    EXPECT_EQ(function_field(*rep, f, "unwound"), 10);
    EXPECT_EQ(function_field(*rep, f, "unfinished"), 0);
  }
}

}  // namespace
}  // namespace atrace::it
