// record -p PID --fast-path through what leaves a call without its return
// (issue 35; docs/fast-path.md, "Unwinders"): C++ throws caught at every
// depth and in threads, a rethrow, a throw caught inside a destructor during
// an unwind, pthread_exit and pthread_cancel from traced depth, siglongjmp
// out of a signal handler, the three stack-switch layouts of
// test_safety.cpp's StackSwitch tests, backtrace() and recursion past the
// shadow stack. Each run: the program prints what it prints untraced, every
// call is counted, the calls that return are timed, the ones unwound are
// said unwound, and a call whose return cannot be seen is marked, never
// given an invented exit.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "tests/integration/fixture.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

constexpr const char* kTarget = TARGET_FASTPATH_UNWIND_BIN;

class FastPathUnwind : public IntegrationTest {
 protected:
  // Runs `target_fastpath_unwind - MODE N` untraced, then again attached by
  // `record --fast-path` with fp_ready and `select` patched; checks the
  // output is the same and returns the recording's JSON report.
  std::optional<nlohmann::json> traced(const std::string& mode, const std::string& n,
                                       const std::string& select) {
    Child reference({kTarget, "-", mode, n});
    Result ref = reference.wait(milliseconds(60000));
    EXPECT_TRUE(ref.exited(0)) << ref.describe();

    const std::string dir = file("fp-" + mode);
    EXPECT_EQ(mkdir(dir.c_str(), 0755), 0);
    Child target({kTarget, dir, mode, n});
    const std::string out = file("fp-" + mode + ".data");
    Child atrace({Paths::atrace, "record", "-p", std::to_string(target.pid()), "--fast-path",
                  "--filter=off", "--select=fp_ready," + select, "-o", out});
    // The target runs once it sees itself patched, then says so.
    const std::string done = dir + "/done";
    struct stat st {};
    for (int i = 0;
         i < 1200 && stat(done.c_str(), &st) != 0 && atrace.running() && target.running(); i++)
      std::this_thread::sleep_for(milliseconds(50));
    const bool ran = stat(done.c_str(), &st) == 0;
    atrace.signal(SIGINT);
    Result r = atrace.wait(milliseconds(30000));
    Result t = target.wait(milliseconds(30000));
    unlink(done.c_str());
    rmdir(dir.c_str());
    EXPECT_TRUE(ran) << "the target never ran its workload\n" << t.describe() << r.describe();
    EXPECT_TRUE(r.exited(0)) << r.describe();
    EXPECT_TRUE(t.exited(0)) << t.describe();
    // It waits until fp_ready() is given back, then says whether the byte
    // is the one it started with.
    EXPECT_EQ(t.out, ref.out + "restored same\n") << t.describe();
    if (!ran || !r.exited(0)) return std::nullopt;
    auto rep = report_json(out);
    if (rep) {
      EXPECT_EQ((*rep)["lost_events"], 0);
    }
    return rep;
  }

  // A function's calls, and how they ended.
  static void expect_calls(const nlohmann::json& rep, const char* f, long long calls,
                           long long unwound = 0, long long abandoned = 0, long long untimed = 0,
                           long long switched = 0) {
    SCOPED_TRACE(f);
    EXPECT_EQ(calls_of(rep, f), calls);
    EXPECT_EQ(function_field(rep, f, "unwound"), unwound);
    EXPECT_EQ(function_field(rep, f, "abandoned"), abandoned);
    EXPECT_EQ(function_field(rep, f, "untimed"), untimed);
    EXPECT_EQ(function_field(rep, f, "untimed_stack_switch"), switched);
    EXPECT_EQ(function_field(rep, f, "unfinished"), 0);
  }
};

// dive() chains thrown at depth t and caught at depth c for every
// 0 <= c < t <= 5 (70 calls a round, the 35 between catch and throw unwound,
// the 35 at or below the catch returning: their exits are recorded), with a
// destructor at each level (cleanups resume the unwind), 20 rounds on each
// of 3 threads.
TEST_F(FastPathUnwind, ThrowsCaughtAtEveryDepthInThreads) {
  auto rep = traced("throw", "20", "dive,step");
  ASSERT_TRUE(rep);
  expect_calls(*rep, "dive", 3 * 20 * 70, 3 * 20 * 35);
  expect_calls(*rep, "step", 3 * 20 * 15);
  EXPECT_EQ((*rep)["orphan_exits"], 0);
}

// A catch that rethrows (`throw;`) to an outer one: rt_top returns, the three
// calls between are unwound, the catch's own call (step) returns.
TEST_F(FastPathUnwind, RethrowToAnOuterCatch) {
  auto rep = traced("rethrow", "50", "rt_top,rt_outer,rt_mid,rt_inner,step");
  ASSERT_TRUE(rep);
  expect_calls(*rep, "rt_top", 50);
  expect_calls(*rep, "rt_outer", 50, 50);
  expect_calls(*rep, "rt_mid", 50, 50);
  expect_calls(*rep, "rt_inner", 50, 50);
  expect_calls(*rep, "step", 50);
  EXPECT_EQ((*rep)["orphan_exits"], 0);
}

// An exception thrown and caught inside a destructor (nested_mid's) while
// another unwinds through it: the inner catch re-arms the frames the outer
// unwind still has to cross, its _Unwind_Resume disarms them again, and the
// outer catch in nested_top finds nested_mid and nested_outer unwound.
TEST_F(FastPathUnwind, ThrowCaughtInADestructorDuringAnUnwind) {
  auto rep = traced("nested", "30", "nested_top,nested_outer,nested_mid,nested_inner,step");
  ASSERT_TRUE(rep);
  expect_calls(*rep, "nested_top", 30);
  expect_calls(*rep, "nested_outer", 30, 30);
  expect_calls(*rep, "nested_mid", 30, 30);
  expect_calls(*rep, "nested_inner", 30, 30);
  expect_calls(*rep, "step", 30);
  EXPECT_EQ((*rep)["orphan_exits"], 0);
}

// pthread_exit and pthread_cancel from three traced levels (5 threads each):
// the forced unwind ends every one of those calls with its thread.
TEST_F(FastPathUnwind, PthreadExitAndCancelFromTracedDepth) {
  auto rep = traced("exit", "5", "ex_top,ex_mid,ex_leave");
  ASSERT_TRUE(rep);
  for (const char* f : {"ex_top", "ex_mid", "ex_leave"}) expect_calls(*rep, f, 10, 10);
}

// A signal handler siglongjmps out of sj_outer/sj_inner 40 times; no traced
// caller returns below them, the next traced entry (sj_after, at the same
// stack depth) finds them abandoned.
TEST_F(FastPathUnwind, SiglongjmpOutOfASignalHandler) {
  auto rep = traced("sigjmp", "40", "sj_outer,sj_inner,sj_after,step");
  ASSERT_TRUE(rep);
  expect_calls(*rep, "sj_outer", 40, 0, 40);
  expect_calls(*rep, "sj_inner", 40, 0, 40);
  expect_calls(*rep, "sj_after", 40);
  expect_calls(*rep, "step", 80);
}

// uftrace's s-ucontext: the context's stack is a buffer in run_ucontext's
// frame, above uc_switch's pending frame. The calls open at the switch end
// there, not timed; uc_foo runs whole on the context's stack.
TEST_F(FastPathUnwind, ContextStackInTheCallersFrame) {
  auto rep = traced("ucontext", "1", "run_ucontext,uc_switch,uc_foo,step");
  ASSERT_TRUE(rep);
  expect_calls(*rep, "run_ucontext", 1, 0, 0, 1, 1);
  expect_calls(*rep, "uc_switch", 1, 0, 0, 1, 1);
  expect_calls(*rep, "uc_foo", 1);
  expect_calls(*rep, "step", 2);
}

// A context on a heap stack, left and resumed 5 times before it returns
// through uc_link.
TEST_F(FastPathUnwind, ContextOnAHeapStack) {
  auto rep = traced("heapctx", "5", "heap_switch,heap_fn,step");
  ASSERT_TRUE(rep);
  expect_calls(*rep, "heap_switch", 6, 0, 0, 6, 6);
  expect_calls(*rep, "heap_fn", 1, 0, 0, 1, 1);
  expect_calls(*rep, "step", 11);
}

// Two contexts on heap stacks handing over to each other 6 times each.
TEST_F(FastPathUnwind, PingPongOfTwoContexts) {
  auto rep = traced("pingpong", "6", "pp_swap,pp_a,pp_b,step");
  ASSERT_TRUE(rep);
  expect_calls(*rep, "pp_swap", 13, 0, 0, 13, 13);
  expect_calls(*rep, "pp_a", 1, 0, 0, 1, 1);
  expect_calls(*rep, "pp_b", 1, 0, 0, 1, 1);
  expect_calls(*rep, "step", 13);
}

// longjmp out of two hooked frames, 50 times, to an untraced caller that
// then writes over their stack, and no hooked call after: each round's
// entry finds the previous round's frames left; the last round's are found
// at the undo (their slots no longer hold the stub): every call abandoned,
// as on the kernel path, none open at the end.
TEST_F(FastPathUnwind, FramesLeftByLongjmpWithNoReturnBelowAreAbandoned) {
  auto rep = traced("leftjmp", "50", "lj_outer,lj_inner");
  ASSERT_TRUE(rep);
  expect_calls(*rep, "lj_outer", 50, 0, 50);
  expect_calls(*rep, "lj_inner", 50, 0, 50);
}

// glibc backtrace() three hooked frames down, 10 times: the walk finds the
// frames an untraced run finds (the printed count), and the program runs on.
// A walk unwinds nothing: its end (the ret of _Unwind_Backtrace, patched)
// re-arms the frames it disarmed, so every call open across it is timed.
TEST_F(FastPathUnwind, BacktraceThroughHookedFrames) {
  auto rep = traced("backtrace", "10", "bt_a,bt_b,bt_c,bt_done,step");
  ASSERT_TRUE(rep);
  for (const char* f : {"bt_a", "bt_b", "bt_c"}) expect_calls(*rep, f, 10);
  expect_calls(*rep, "bt_done", 1);
  expect_calls(*rep, "step", 21);
}

// Four chains of rec() 3,000 deep under rec_top: rec_top and 1,023 rec
// frames fill the 1,024-frame shadow stack and are timed, the 1,977 deeper
// calls are counted, not timed; every other chain throws from the bottom to
// rec_top's catch, which finds the 1,023 hooked frames unwound.
TEST_F(FastPathUnwind, DeepRecursionPastTheShadowStack) {
  auto rep = traced("recurse", "4", "rec,rec_top");
  ASSERT_TRUE(rep);
  expect_calls(*rep, "rec_top", 4);
  expect_calls(*rep, "rec", 4 * 3000, 2 * 1023, 0, 4 * (3000 - 1023));
}

}  // namespace
}  // namespace atrace::it
