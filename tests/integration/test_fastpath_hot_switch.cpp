// record -p PID --fast-path=hot (issue 35, docs/fast-path.md "Hot
// functions"): the kernel's probes first; the function the relevance filter
// finds too short is patched instead of detached, in one stop, so that its
// calls are all recorded once: the kernel's before the switch, the fast
// path's after; in a C program and in a C++ one whose exceptions go through
// patched and kernel-probed frames.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/fixture.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

constexpr const char* kTarget = TARGET_FASTPATH_HOT_SWITCH_BIN;
constexpr const char* kCxxTarget = TARGET_FASTPATH_HOT_SWITCH_CXX_BIN;

// hot()'s DETACH event says "patched instead" (reason 6).
template <typename Json>
void expect_patched_instead(const Json& rep) {
  bool switched = false;
  for (const auto& d : rep["detached"])
    if (d["name"] == "hot") {
      EXPECT_EQ(d["rule"], "patched instead") << d.dump();
      switched = true;
    }
  EXPECT_TRUE(switched) << rep["detached"].dump();
}

// The C target's recording: every call of hot() once (`made`, the
// program's count), the kernel's part and the fast path's, no loss, no
// double count; other() stayed on the kernel's probes.
template <typename Json>
void expect_every_call_once(const Json& rep, long long made) {
  EXPECT_EQ(rep["lost_events"], 0);
  EXPECT_EQ(calls_of(rep, "hot"), made);
  EXPECT_EQ(function_field(rep, "hot", "unfinished"), 0);
  EXPECT_EQ(calls_of(rep, "other"), 200);
  expect_patched_instead(rep);
}

// The C++ tests' selection: middle() and tail_to_hot() kept on the
// kernel's probes, so that the throws go through their uretprobes once
// hot() is patched.
std::vector<std::string> cxx_selection() {
  return {"--select=hot,middle,tail_to_hot", "--filter-keep=middle,tail_to_hot"};
}

// The C++ target's recording: hot(), middle() and tail_to_hot() counted
// as the program counts them (`counts`: its three numbers), no orphan exit.
template <typename Json>
void expect_cxx_calls_once(const Json& rep, std::istream& counts) {
  long long hot = 0, middle = 0, tail = 0;
  counts >> hot >> middle >> tail;
  // 200 rounds a thread at least on the fast path.
  ASSERT_GT(middle, 2 * 200);
  EXPECT_EQ(rep["lost_events"], 0);
  EXPECT_EQ(rep["orphan_exits"], 0);
  EXPECT_EQ(calls_of(rep, "hot"), hot);
  EXPECT_EQ(calls_of(rep, "middle"), middle);
  EXPECT_EQ(calls_of(rep, "tail_to_hot"), tail);
  EXPECT_EQ(function_field(rep, "middle", "unfinished"), 0);
  EXPECT_EQ(function_field(rep, "tail_to_hot", "unfinished"), 0);
  EXPECT_EQ(function_field(rep, "hot", "unfinished"), 0);
  expect_patched_instead(rep);
}

class FastPathHotSwitch : public IntegrationTest {
 protected:
  // Runs `target` untraced ("-"), then traced by `record -p PID
  // --fast-path=hot` with `args` into `out` until it has done its work
  // (DIR/done), then stops the recording; checks that hot() was patched
  // instead of detached, that the program exited 0 with the untraced
  // output and its code given back byte for byte ("restored same"), and
  // returns the counts the program wrote into DIR/count.
  std::string run_switched(const char* target_bin, const std::string& name,
                           std::vector<std::string> args, const std::string& out) {
    const std::string ref = untraced(target_bin);
    const std::string dir = file(name);
    EXPECT_EQ(mkdir(dir.c_str(), 0755), 0);
    Child target({target_bin, dir});
    std::vector<std::string> cmd = {Paths::atrace, "record", "-p", std::to_string(target.pid()),
                                    "--fast-path=hot"};
    cmd.insert(cmd.end(), args.begin(), args.end());
    cmd.insert(cmd.end(), {"-o", out});
    Child atrace(cmd);
    // The target starts once atrace's every probe is on: the kernel writes
    // a return probe's int3 before its entry probe's, and calls begun in
    // between would open the trace with exits without entries.
    EXPECT_TRUE(atrace.wait_for_err("attached in", milliseconds(60000)))
        << atrace.wait(milliseconds(5000)).describe();
    std::ofstream(dir + "/go").close();
    const std::string done = dir + "/done";
    struct stat st {};
    for (int i = 0; i < 1800 && stat(done.c_str(), &st) != 0 && atrace.running(); i++)
      std::this_thread::sleep_for(milliseconds(50));
    EXPECT_EQ(stat(done.c_str(), &st), 0) << "the target never finished its workload\n"
                                          << atrace.wait(milliseconds(5000)).describe();
    atrace.signal(SIGINT);
    Result r = atrace.wait(milliseconds(60000));
    expect_switched(r);
    Result t = target.wait(milliseconds(40000));
    EXPECT_TRUE(t.exited(0)) << t.describe();
    EXPECT_EQ(t.out, ref + "restored same\n");
    return take_counts(dir);
  }

  // The same launched: `record --fast-path=hot ARGS -o OUT -- TARGET DIR
  // launched` (the program exits once its work is done); checks hot() was
  // patched instead, the exit status and the untraced output; returns the
  // program's counts.
  std::string run_launched(const char* target_bin, const std::string& name,
                           std::vector<std::string> args, const std::string& out) {
    const std::string ref = untraced(target_bin);
    const std::string dir = file(name);
    EXPECT_EQ(mkdir(dir.c_str(), 0755), 0);
    std::vector<std::string> cmd = {Paths::atrace, "record", "--fast-path=hot"};
    cmd.insert(cmd.end(), args.begin(), args.end());
    cmd.insert(cmd.end(), {"-o", out, "--", target_bin, dir, "launched"});
    Result r = run(cmd, milliseconds(90000));
    EXPECT_NE(r.err.find("ready to patch"), std::string::npos) << r.err;
    expect_switched(r);
    EXPECT_EQ(r.out, ref);
    return take_counts(dir);
  }

 private:
  // What `target_bin` prints untraced.
  static std::string untraced(const char* target_bin) {
    Child reference({target_bin, "-"});
    Result ref = reference.wait(milliseconds(30000));
    EXPECT_TRUE(ref.exited(0)) << ref.describe();
    return ref.out;
  }
  // The recording ended well, hot() patched instead of detached.
  static void expect_switched(const Result& r) {
    EXPECT_TRUE(r.exited(0)) << r.describe();
    EXPECT_NE(r.err.find("patched hot instead of detaching it"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("1 function patched instead of detached"), std::string::npos) << r.err;
  }
  // The program's counts (DIR/count); DIR goes.
  static std::string take_counts(const std::string& dir) {
    std::ifstream in(dir + "/count");
    std::string counts((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    unlink((dir + "/count").c_str());
    unlink((dir + "/go").c_str());
    unlink((dir + "/done").c_str());
    rmdir(dir.c_str());
    return counts;
  }
};

TEST_F(FastPathHotSwitch, TheHotFunctionIsPatchedInsteadAndEveryCallCountedOnce) {
  const std::string out = file("hot.data");
  // The default filter (absolute, 2 us): hot() is far shorter, other()
  // sleeps 200 us a call.
  std::istringstream counts(run_switched(kTarget, "hot", {"--select=hot,other"}, out));
  ASSERT_FALSE(HasFailure());
  long long made = 0;
  counts >> made;
  ASSERT_GT(made, 200 * 1000);

  auto rep = report_json(out);
  ASSERT_TRUE(rep);
  expect_every_call_once(*rep, made);
  // Its numbers are whole: not marked detached (partial).
  for (const auto& f : (*rep)["functions"]) {
    if (f["name"] == "hot") {
      EXPECT_EQ(f["detached"], false) << f.dump();
    }
  }
  auto info = run({Paths::atrace, "info", "-i", out});
  EXPECT_NE(info.out.find("patched instead"), std::string::npos) << info.out;
}

// A launched command (`record --fast-path=hot -- CMD`): the kernel's probes
// go on the files before its exec, the trampolines are made from the files'
// bytes at its entry point, and the switch works as in attach mode: every
// call of hot() recorded once, the output the untraced one.
TEST_F(FastPathHotSwitch, ALaunchedCommandsHotFunctionIsPatchedInstead) {
  const std::string out = file("hotlaunch.data");
  std::istringstream counts(run_launched(kTarget, "hotlaunch", {"--select=hot,other"}, out));
  ASSERT_FALSE(HasFailure());
  long long made = 0;
  counts >> made;
  ASSERT_GT(made, 200 * 1000);

  auto rep = report_json(out);
  ASSERT_TRUE(rep);
  expect_every_call_once(*rep, made);
}

// The C++ test's launched form: the guard's probes, on the unwinders'
// entries from the exec, moved onto their trampolines at the entry point.
TEST_F(FastPathHotSwitch, ALaunchedCxxCommandsExceptionsThroughPatchedAndProbedFrames) {
  const std::string out = file("hotlaunchcxx.data");
  std::istringstream counts(run_launched(kCxxTarget, "hotlaunchcxx", cxx_selection(), out));
  ASSERT_FALSE(HasFailure());
  auto rep = report_json(out);
  ASSERT_TRUE(rep);
  expect_cxx_calls_once(*rep, counts);
}

// The C++ unwinder mapped: the unwinders' entries are patched at the start,
// the unwind guard probes their trampolines in the memfd code region, and
// exceptions thrown through hot()'s patched frames and middle()'s and
// tail_to_hot()'s kernel-probed ones (tail_to_hot jumps to hot: its return
// is the kernel's uretprobe trampoline) in two threads are caught as
// untraced, every call counted once.
TEST_F(FastPathHotSwitch, CxxExceptionsThroughPatchedAndProbedFramesInTwoThreads) {
  const std::string out = file("hotcxx.data");
  // middle() and tail_to_hot() kept on the kernel's probes: the throws go
  // through their uretprobes once hot() is patched. The program's own
  // output and hot()'s and _Unwind_RaiseException's bytes checked.
  std::istringstream counts(run_switched(kCxxTarget, "hotcxx", cxx_selection(), out));
  ASSERT_FALSE(HasFailure());
  auto rep = report_json(out);
  ASSERT_TRUE(rep);
  expect_cxx_calls_once(*rep, counts);
}

}  // namespace
}  // namespace atrace::it
