// record --fast-path -- CMD (issue 35, launch mode): the command runs to its
// entry point under ptrace, its program's and libraries' functions are
// patched there (record/entry_stop.h), and every call from then on is
// counted exactly, the program's own constructor's included; the program
// prints what it prints untraced and finds its code given back at the end.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include "tests/integration/fixture.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

constexpr const char* kTarget = TARGET_FASTPATH_LAUNCH_BIN;
const std::string kSelect = "--select=work,leaf,libtarget_shared.so:shared_fn";

class FastPathLaunch : public IntegrationTest {
 protected:
  // Runs `cmd` (which ends in the target's arguments) under atrace record
  // --fast-path until the target says it is done, then stops the recording
  // (SIGINT): the target is alive for the last read of its ring, and then
  // sees its code given back. Returns atrace's result; `out` gets the trace.
  Result record_until_done(const std::vector<std::string>& cmd, const std::string& out,
                           const std::string& dir) {
    std::vector<std::string> argv = {Paths::atrace, "record", "--fast-path", "--filter=off",
                                     kSelect,       "-o",     out,           "--"};
    argv.insert(argv.end(), cmd.begin(), cmd.end());
    Child atrace(argv);
    const std::string done = dir + "/done";
    struct stat st {};
    for (int i = 0; i < 600 && stat(done.c_str(), &st) != 0 && atrace.running(); i++)
      std::this_thread::sleep_for(milliseconds(50));
    EXPECT_EQ(stat(done.c_str(), &st), 0) << "the target never ran its workload";
    atrace.signal(SIGINT);
    Result r = atrace.wait(milliseconds(30000));
    unlink(done.c_str());
    return r;
  }

  void expect_counts(const std::string& out) {
    auto rep = report_json(out);
    ASSERT_TRUE(rep);
    EXPECT_EQ((*rep)["lost_events"], 0);
    // 7 from the constructor, 3,000 on the main thread, 2,000 on the other.
    EXPECT_EQ(calls_of(*rep, "work"), 5007);
    EXPECT_EQ(calls_of(*rep, "leaf"), 10014);
    EXPECT_EQ(calls_of(*rep, "shared_fn"), 1500);
    for (const char* fn : {"work", "leaf", "shared_fn"})
      EXPECT_EQ(function_field(*rep, fn, "unfinished"), 0) << fn;
    EXPECT_EQ((*rep)["orphan_exits"], 0);
  }
};

TEST_F(FastPathLaunch, EveryCallFromTheEntryPointCountedAndTheProgramUnchanged) {
  Result ref = run({kTarget, "-"});
  ASSERT_TRUE(ref.exited(0)) << ref.describe();
  const std::string dir = file("launch");
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  const std::string out = file("launch.atrace");
  Result r = record_until_done({kTarget, dir, tag_arg()}, out, dir);
  ASSERT_TRUE(r.exited(0)) << r.describe();
  // Patched before main (at the entry point), given back at the end.
  EXPECT_EQ(r.out, ref.out + "patched at main yes, given back yes\n") << r.describe();
  // The program's two functions and the library's one, and the time the
  // program was held for it.
  EXPECT_NE(r.err.find("--fast-path: 3 functions patched in"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("the program stopped"), std::string::npos) << r.err;
  expect_counts(out);
  auto info = run({Paths::atrace, "info", "-i", out});
  ASSERT_TRUE(info.exited(0)) << info.describe();
  EXPECT_NE(info.out.find("patched"), std::string::npos) << info.out;
}

// A command whose own program matches nothing (a script that execs the
// target): followed through its exec to the program, then to its entry.
TEST_F(FastPathLaunch, ProgramExecdByAScript) {
  const std::string dir = file("script");
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  const std::string script = file("run.sh");
  {
    std::ofstream f(script);
    f << "#!/bin/sh\nexec " << kTarget << " \"$@\"\n";
  }
  ASSERT_EQ(chmod(script.c_str(), 0755), 0);
  const std::string out = file("script.atrace");
  Result r = record_until_done({script, dir, tag_arg()}, out, dir);
  ASSERT_TRUE(r.exited(0)) << r.describe();
  EXPECT_NE(r.out.find("patched at main yes, given back yes"), std::string::npos) << r.describe();
  EXPECT_NE(r.err.find("exec'd by the command"), std::string::npos) << r.err;
  expect_counts(out);
}

// Nothing selected can be patched (a branch into its first bytes): the
// recording fails in one line and the command, held at its entry point,
// is killed there: it prints nothing.
TEST_F(FastPathLaunch, NothingPatchedKillsTheCommandBeforeMain) {
  Result r = run({Paths::atrace, "record", "--fast-path", "--select=pl_loop_into_prefix", "-o",
                  file("none.atrace"), "--", Paths::target_placement, tag_arg()});
  const std::string line = expect_one_error_line(r);
  EXPECT_NE(line.find("no selected function can be patched"), std::string::npos) << line;
  EXPECT_EQ(r.out, "") << r.describe();
}

// setcontext is one of the unwinder entries the fast path patches to give
// return addresses back before a stack switch: selected too, it keeps that
// patch and is said not traced; the rest installs (it once failed whole:
// two patches at one address).
TEST_F(FastPathLaunch, SelectedUnwinderEntryKeepsItsOwnPatch) {
  const std::vector<std::string> cmd = {Paths::target_safety, "context", tag_arg()};
  Result ref = run(cmd);
  ASSERT_TRUE(ref.exited(0)) << ref.describe();
  std::vector<std::string> argv = {
      Paths::atrace, "record",         "--fast-path", "--select=step,libc.so.6:setcontext",
      "-o",          file("c.atrace"), "--"};
  argv.insert(argv.end(), cmd.begin(), cmd.end());
  Result r = run(argv);
  ASSERT_TRUE(r.exited(0)) << r.describe();
  EXPECT_EQ(r.out, ref.out);
  EXPECT_NE(r.err.find("setcontext: patched as an unwinder entry"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--fast-path: 1 function patched"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace atrace::it
