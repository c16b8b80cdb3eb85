// The fast path's ring is a memfd shared by the target and atrace
// (fastpath/ring_layout.h): the records a process wrote right before it
// exited are still read, and a fork child, which shares the lanes, writes
// nothing into them while its hooked returns keep working.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/integration/fixture.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

constexpr const char* kTarget = TARGET_FASTPATH_RING_BIN;

class FastPathRing : public IntegrationTest {
 protected:
  // Runs the target in `mode` under `record -p --fast-path` until it exits
  // (atrace then ends by itself); returns the target's and atrace's results.
  // The target starts its calls once it is patched and DIR/go exists,
  // made once atrace says it records (its "probing" line: stderr goes to a
  // file the test reads meanwhile).
  std::pair<Result, Result> record(const std::string& mode, const std::string& out,
                                   const std::string& extra = "") {
    const std::string dir = file("ring_" + mode);
    EXPECT_EQ(mkdir(dir.c_str(), 0755), 0);
    Child target({kTarget, mode, dir});
    pid_ = target.pid();
    const std::string err = dir + "/err";
    Child atrace({"/bin/sh", "-c",
                  "exec \"$0\" record -p " + std::to_string(target.pid()) +
                      " --fast-path --filter=off --select=count,outer,forker " + extra +
                      " -o \"$1\" 2>\"$2\"",
                  Paths::atrace, out, err});
    for (int i = 0; i < 2400 && atrace.running(); i++) {  // 120 s
      std::ifstream in(err);
      std::stringstream text;
      text << in.rdbuf();
      if (text.str().find("probing") != std::string::npos) break;
      std::this_thread::sleep_for(milliseconds(50));
    }
    std::ofstream(dir + "/go").put('\n');
    Result t = target.wait(milliseconds(150000));
    Result r = atrace.wait(milliseconds(60000));
    std::ifstream in(err);
    std::stringstream text;
    text << in.rdbuf();
    r.err = text.str();
    return {t, r};
  }
  pid_t pid_ = 0;  // the last target's
};

TEST_F(FastPathRing, CallsRightBeforeTheExitAreAllRead) {
  Child reference({kTarget, "exit", "-"});
  Result ref = reference.wait(milliseconds(30000));
  ASSERT_TRUE(ref.exited(0)) << ref.describe();
  const std::string out = file("ring_exit.data");
  auto [t, r] = record("exit", out);
  ASSERT_TRUE(t.exited(0)) << t.describe() << r.describe();
  ASSERT_TRUE(r.exited(0)) << r.describe();
  EXPECT_EQ(t.out, ref.out);
  // 200,000 calls in a few milliseconds and the exit: most records were
  // still in the ring when the process was gone; every one is in the trace.
  auto rep = report_json(out);
  ASSERT_TRUE(rep);
  EXPECT_EQ((*rep)["lost_events"], 0);
  EXPECT_EQ(calls_of(*rep, "count"), 200000);
  EXPECT_EQ(function_field(*rep, "count", "unfinished"), 0);
  EXPECT_EQ(r.err.find("lost"), std::string::npos) << r.err;
}

TEST_F(FastPathRing, AForkChildRecordsNothingAndRunsUnchanged) {
  Child reference({kTarget, "fork", "-"});
  Result ref = reference.wait(milliseconds(30000));
  ASSERT_TRUE(ref.exited(0)) << ref.describe();
  const std::string out = file("ring_fork.data");
  // The smallest lanes (1 MiB, 32 Ki records a CPU) hold these calls.
  auto [t, r] = record("fork", out, "--fast-path-buffer=1M");
  ASSERT_TRUE(t.exited(0)) << t.describe() << r.describe();
  ASSERT_TRUE(r.exited(0)) << r.describe();
  // The child returned from forker() through its own shadow stack and
  // computed what it computes untraced.
  EXPECT_EQ(t.out, ref.out);
  EXPECT_NE(t.out.find("child ok"), std::string::npos) << t.out;
  auto rep = report_json(out);
  ASSERT_TRUE(rep);
  EXPECT_EQ((*rep)["lost_events"], 0);
  // The parent's calls only: the child's 5,100 count() and 100 outer()
  // calls, with the parent's thread pointer, would land on its main thread.
  EXPECT_EQ(calls_of(*rep, "count"), 2000);
  EXPECT_LE(calls_of(*rep, "outer"), 0);  // not in the report, or no calls
  EXPECT_EQ(calls_of(*rep, "forker"), 1);
  EXPECT_EQ(function_field(*rep, "forker", "unfinished"), 0);
  auto threads = report_json(out, {"--threads"});
  ASSERT_TRUE(threads);
  for (const auto& th : (*threads)["threads"])
    if (th["events"].get<long long>() > 0) {
      EXPECT_EQ(th["pid"], pid_) << th.dump();
    }
}

// --fast-path-buffer: a size out of range is one line naming the option,
// and the option means nothing without --fast-path.
TEST_F(FastPathRing, BufferSizeOutOfRangeIsOneLine) {
  for (const char* arg : {"--fast-path-buffer=64K", "--fast-path-buffer=32G"}) {
    SCOPED_TRACE(arg);
    Result r = run({Paths::atrace, "record", "-o", file("x.data"), "-p", "1", "--fast-path", arg},
                   milliseconds(20000));
    EXPECT_FALSE(r.exited(0)) << r.describe();
    EXPECT_NE(r.err.find("--fast-path-buffer"), std::string::npos) << r.err;
  }
  Result r =
      run({Paths::atrace, "record", "-o", file("x.data"), "-p", "1", "--fast-path-buffer=8M"},
          milliseconds(20000));
  EXPECT_FALSE(r.exited(0)) << r.describe();
  EXPECT_NE(r.err.find("--fast-path"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace atrace::it
