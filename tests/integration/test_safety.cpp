// The safety corpus (issue 14, docs/safety.md): ordinary programs traced
// with --select='*' and with 'libc.so.6:*' must print exactly what they
// print untraced and end with the same status; counts stay exact where the
// truth is known. Also: two tracers on one function, a clean stop under
// load, and a launched target recorded from its exec on.
//
// Inputs are small: 'libc.so.6:*' puts ~2000 probes on libc, most of them
// single-stepped, so every libc call costs microseconds.
#include <signal.h>

#include <algorithm>
#include <fstream>

#include "tests/integration/fixture.h"
#include "tests/integration/probe_path.h"
#include "tests/integration/report.h"
#include "tests/integration/untraced_compare.h"

namespace atrace::it {
namespace {

const std::string kAll = "--select=*";
const std::string kLibc = "--select=libc.so.6:*";

class Safety : public IntegrationTest {
 protected:
  // The corpus rule for one program and one way of tracing it; returns the
  // report of the traced run (nullopt after a failure).
  std::optional<nlohmann::json> expect_unchanged(const std::vector<std::string>& cmd,
                                                 const std::vector<std::string>& atrace_args) {
    const std::string trace = file("trace" + std::to_string(++runs_) + ".atrace");
    ComparedRun r = run_untraced_and_traced(cmd, trace, atrace_args);
    EXPECT_TRUE(behaves_as_untraced(r));
    if (::testing::Test::HasFailure()) return std::nullopt;
    return report_json(trace);
  }
  std::string input(const std::string& name) const {
    return std::string(Paths::safety_inputs) + "/" + name;
  }
  int runs_ = 0;
};

// One test per way of tracing: with --follow-forks, libc's probes are in
// every process of the machine, and attaching them takes seconds.
TEST_F(Safety, BashScriptWithSubshellsPipesTrapsAndFunctions) {
  auto rep = expect_unchanged({"/bin/bash", input("script.sh")}, {kAll});
  ASSERT_TRUE(rep);
  EXPECT_EQ((*rep)["orphan_exits"], 0);
}

TEST_F(Safety, BashScriptUnderLibcFollowingForks) {
  ASSERT_TRUE(expect_unchanged({"/bin/bash", input("script.sh")}, {kLibc, "--follow-forks"}));
}

TEST_F(Safety, PythonRaisingAndCatchingExceptions) {
  const std::vector<std::string> cmd = {"/usr/bin/python3", input("exceptions.py")};
  ASSERT_TRUE(expect_unchanged(cmd, {kAll}));
  ASSERT_TRUE(expect_unchanged(cmd, {kLibc}));
}

// step() returns normally; jump_deep() and jump_mid() are left by longjmp
// and siglongjmp: their calls are counted and closed, abandoned, where the
// thread is next seen below them (the step() that follows the landing).
TEST_F(Safety, SetjmpLongjmpAndSigsetjmpSiglongjmp) {
  const std::vector<std::string> cmd = {Paths::target_safety, "jmp", "6", tag_arg()};
  auto rep = expect_unchanged(cmd, {kAll});
  ASSERT_TRUE(rep);
  EXPECT_EQ(calls_of(*rep, "step"), 12);
  EXPECT_EQ(function_field(*rep, "step", "unfinished"), 0);
  EXPECT_EQ(function_field(*rep, "step", "abandoned"), 0);
  for (const char* fn : {"jump_deep", "jump_mid"}) {
    EXPECT_EQ(calls_of(*rep, fn), 6) << fn;
    EXPECT_EQ(function_field(*rep, fn, "abandoned"), 6) << fn;
    EXPECT_EQ(function_field(*rep, fn, "unfinished"), 0) << fn;
  }
  rep = expect_unchanged(cmd, {kLibc});
  ASSERT_TRUE(rep);
  EXPECT_EQ(find_function(*rep, "setjmp"), nullptr) << "setjmp must get no probe";
  EXPECT_EQ(find_function(*rep, "_setjmp"), nullptr);
  EXPECT_EQ(find_function(*rep, "__sigsetjmp"), nullptr);
}

TEST_F(Safety, GetcontextSwapcontextSetcontext) {
  const std::vector<std::string> cmd = {Paths::target_safety, "context", tag_arg()};
  auto rep = expect_unchanged(cmd, {kAll});
  ASSERT_TRUE(rep);
  EXPECT_EQ(calls_of(*rep, "step"), 3);
  ASSERT_TRUE(expect_unchanged(cmd, {kLibc}));
}

// Stack switches (issue 29, docs/safety.md): at swapcontext and setcontext
// the unwind guard gives every pending return address of the thread back,
// so the kernel's return records of the frames left on the other stack
// cannot send a return elsewhere. The calls that switched end there
// (unwound), unseen; every call made on one stack returns as usual.
class StackSwitch : public Safety {
 protected:
  // The three ways of tracing of the issue: everything, libc, and only
  // the functions given. Each behaves as untraced; `step` returns normally
  // `steps` times, never unfinished.
  void expect_safe(const std::vector<std::string>& cmd, const std::string& only, long steps) {
    for (const std::vector<std::string>& how :
         std::vector<std::vector<std::string>>{{kAll}, {kLibc}, {"--select=" + only}}) {
      SCOPED_TRACE(how[0]);
      auto rep = expect_unchanged(cmd, how);
      ASSERT_TRUE(rep);
      if (how[0] == kAll) {
        EXPECT_EQ(calls_of(*rep, "step"), steps);
        EXPECT_EQ(function_field(*rep, "step", "unfinished"), 0);
        EXPECT_EQ((*rep)["orphan_exits"], 0);
      }
      reports_.push_back(std::move(*rep));
    }
  }
  std::vector<nlohmann::json> reports_;  // of the runs above, in their order
};

// uftrace's s-ucontext: the context's stack is a buffer in run_ucontext's
// frame, above uc_switch's pending frame. Before the guard: with '*' the
// program left run_ucontext at uc_switch's return (printed nothing), with
// the two functions selected it died of SIGILL.
TEST_F(StackSwitch, ContextStackInTheCallersFrame) {
  expect_safe({Paths::target_safety, "ucontext", tag_arg()}, "uc_switch,uc_foo", 2);
  ASSERT_EQ(reports_.size(), 3u);
  for (size_t i : {0, 2}) {
    const auto& rep = reports_[i];
    // uc_foo runs whole on the context's stack: entered and returned once.
    EXPECT_EQ(calls_of(rep, "uc_foo"), 1);
    EXPECT_EQ(function_field(rep, "uc_foo", "unfinished"), 0);
    // uc_switch left its stack: it ends at the switch.
    EXPECT_EQ(calls_of(rep, "uc_switch"), 1);
    EXPECT_EQ(function_field(rep, "uc_switch", "untimed"), 1);
    EXPECT_EQ(function_field(rep, "uc_switch", "untimed_stack_switch"), 1);
  }
}

// A context on a heap stack, below every frame of the main stack, left
// and resumed 5 times before it returns through uc_link.
TEST_F(StackSwitch, ContextOnAHeapStack) {
  expect_safe({Paths::target_safety, "heapctx", "5", tag_arg()}, "heap_switch,heap_fn,step", 11);
  const auto& only = reports_[2];
  EXPECT_EQ(calls_of(only, "step"), 11);
  EXPECT_EQ(function_field(only, "step", "unfinished"), 0);
  EXPECT_EQ(calls_of(only, "heap_switch"), 6);
  EXPECT_EQ(function_field(only, "heap_switch", "untimed"), 6);
  EXPECT_EQ(function_field(only, "heap_switch", "untimed_stack_switch"), 6);
  EXPECT_EQ(calls_of(only, "heap_fn"), 1);
}

// Two contexts on heap stacks handing over to each other 6 times each.
TEST_F(StackSwitch, PingPongOfTwoContexts) {
  expect_safe({Paths::target_safety, "pingpong", "6", tag_arg()}, "pp_swap,pp_a,pp_b,step", 13);
  const auto& only = reports_[2];
  EXPECT_EQ(calls_of(only, "step"), 13);
  EXPECT_EQ(function_field(only, "step", "unfinished"), 0);
  EXPECT_EQ(calls_of(only, "pp_swap"), 13);
  EXPECT_EQ(function_field(only, "pp_swap", "untimed"), 13);
  EXPECT_EQ(function_field(only, "pp_swap", "untimed_stack_switch"), 13);
  EXPECT_EQ(calls_of(only, "pp_a"), 1);
  EXPECT_EQ(calls_of(only, "pp_b"), 1);
}

// A stack walk is not a throw: glibc backtrace() 4 traced frames down, 10
// times, finds the frames it finds untraced (the output names them), and
// every traced call returns, timed.
TEST_F(Safety, BacktraceLeavesEveryReturnProbeWorking) {
  const std::vector<std::string> cmd = {Paths::target_safety, "backtrace", "10", tag_arg()};
  for (const std::string& how : {kAll, kLibc, std::string("--select=bt_*,run_backtrace")}) {
    SCOPED_TRACE(how);
    auto rep = expect_unchanged(cmd, {how});
    ASSERT_TRUE(rep);
    if (how == kLibc) {
      EXPECT_GE(calls_of(*rep, "backtrace"), 10);
      EXPECT_EQ(function_field(*rep, "backtrace", "unfinished"), 0);
      continue;
    }
    for (const char* f : {"bt_foo", "bt_c", "bt_b", "bt_a"}) {
      EXPECT_EQ(calls_of(*rep, f), 10) << f;
      EXPECT_EQ(function_field(*rep, f, "unfinished"), 0) << f;
      EXPECT_EQ(function_field(*rep, f, "unwound"), 0) << f;
    }
    EXPECT_EQ(calls_of(*rep, "run_backtrace"), 1);
    EXPECT_EQ(function_field(*rep, "run_backtrace", "unfinished"), 0);
    EXPECT_EQ((*rep)["orphan_exits"], 0);
  }
}

// A walk left by longjmp from its callback never reaches its `ret`: its
// frames stay disarmed, and the next walk (a whole backtrace()) re-arms
// only its own, so every later call returns through its probe.
TEST_F(Safety, StackWalkLeftByLongjmp) {
  const std::vector<std::string> cmd = {Paths::target_safety, "walkjmp", "5", tag_arg()};
  for (const std::string& how : {kAll, std::string("--select=wj_*,bt_*,step")}) {
    SCOPED_TRACE(how);
    auto rep = expect_unchanged(cmd, {how});
    ASSERT_TRUE(rep);
    EXPECT_EQ(calls_of(*rep, "step"), 5);
    EXPECT_EQ(function_field(*rep, "step", "unfinished"), 0);
    for (const char* f : {"bt_foo", "bt_c", "bt_b", "bt_a"}) {
      EXPECT_EQ(calls_of(*rep, f), 5) << f;
      EXPECT_EQ(function_field(*rep, f, "unfinished"), 0) << f;
      EXPECT_EQ(function_field(*rep, f, "unwound"), 0) << f;
    }
    EXPECT_EQ(calls_of(*rep, "wj_mid"), 5);
    EXPECT_EQ((*rep)["orphan_exits"], 0);
  }
}

TEST_F(Safety, VforkAndPosixSpawn) {
  const std::vector<std::string> cmd = {Paths::target_safety, "vfork", tag_arg()};
  auto rep = expect_unchanged(cmd, {kAll, "--follow-forks"});
  ASSERT_TRUE(rep);
  EXPECT_EQ(calls_of(*rep, "step"), 3);
  rep = expect_unchanged(cmd, {kLibc, "--follow-forks"});
  ASSERT_TRUE(rep);
  // vfork is probed (the kernel copies the return records to the child):
  // the parent's 4 calls return, and each child's return from it is its
  // own exit, without entry. The fast path refuses it by name (it returns
  // twice, once in a child that shares the parent's memory and its
  // shadow stack): not traced at all (docs/fast-path.md).
  if (fast_path_run()) EXPECT_EQ(find_function(*rep, "vfork"), nullptr);
  else EXPECT_GE(calls_of(*rep, "vfork"), 4);
}

TEST_F(Safety, ForkReturnsInBothProcesses) {
  const std::vector<std::string> cmd = {Paths::target_safety, "fork", tag_arg()};
  auto rep = expect_unchanged(cmd, {kAll, "--follow-forks"});
  ASSERT_TRUE(rep);
  EXPECT_EQ(calls_of(*rep, "step"), 2);
  EXPECT_EQ(function_field(*rep, "step", "unfinished"), 0);
}

TEST_F(Safety, ForkUnderLibcFollowingForks) {
  ASSERT_TRUE(
      expect_unchanged({Paths::target_safety, "fork", tag_arg()}, {kLibc, "--follow-forks"}));
}

// GCC moved the unlikely paths of checked() and scaled() to .cold
// fragments, jumped into from the middle of the functions.
TEST_F(Safety, ColdFragmentsGetNoProbe) {
  Result nm = run({"nm", Paths::target_cold});
  ASSERT_TRUE(nm.exited(0)) << nm.describe();
  ASSERT_NE(nm.out.find(" checked.cold"), std::string::npos) << "GCC did not split checked()\n"
                                                             << nm.out;
  ASSERT_NE(nm.out.find(" scaled.cold"), std::string::npos) << nm.out;

  Result list = run({Paths::atrace, "list", Paths::target_cold, "*"});
  ASSERT_TRUE(list.exited(0)) << list.describe();
  for (const char* fragment : {"checked.cold", "scaled.cold", "_start"}) {
    const size_t at = list.out.find(std::string(" ") + fragment + " ");
    ASSERT_NE(at, std::string::npos) << fragment << "\n" << list.out;
    const size_t bol = list.out.rfind('\n', at) + 1;
    const std::string line = list.out.substr(bol, list.out.find('\n', at) - bol);
    EXPECT_NE(line.find(" none "), std::string::npos) << line;
  }

  const std::vector<std::string> cmd = {Paths::target_cold, "2000", tag_arg()};
  const std::string trace = file("cold.atrace");
  // Exact counts of short functions: the default filter would detach them.
  ComparedRun r = run_untraced_and_traced(cmd, trace, {kAll, "--filter=off"});
  ASSERT_TRUE(behaves_as_untraced(r));
  // The status output says, once, what the selector's fragments get.
  EXPECT_NE(r.atrace_lines.find("checked.cold"), std::string::npos) << r.atrace_lines;
  auto rep = report_json(trace);
  ASSERT_TRUE(rep);
  EXPECT_EQ(calls_of(*rep, "checked"), 2000);
  EXPECT_EQ(calls_of(*rep, "scaled"), 2000);
  EXPECT_EQ(calls_of(*rep, "main"), 1);
  EXPECT_EQ((*rep)["orphan_exits"], 0);
}

TEST_F(Safety, SortOnRealInput) {
  const std::string in = file("lines.txt");
  {
    std::ofstream f(in);
    for (long i = 1; i <= 3000; ++i) f << (i * 7919) % 3001 << " line " << i << "\n";
  }
  const std::vector<std::string> cmd = {"/usr/bin/sort", "-n", in};
  ASSERT_TRUE(expect_unchanged(cmd, {kAll}));
  ASSERT_TRUE(expect_unchanged(cmd, {kLibc}));
}

TEST_F(Safety, Sqlite3OnRealInput) {
  const std::vector<std::string> cmd = {"/usr/bin/sqlite3",
                                        ":memory:", ".read " + input("queries.sql")};
  ASSERT_TRUE(expect_unchanged(cmd, {kLibc}));
  ASSERT_TRUE(expect_unchanged(cmd, {"--select=libsqlite3.so*:*"}));
}

// bpftrace's uprobe, system-wide, is on step() first; atrace reads the
// file's bytes, not the int3 bpftrace wrote, and both count exactly.
TEST_F(Safety, BpftraceThenAtraceOnOneFunction) {
  Child bpftrace({"bpftrace", "-e",
                  std::string("uprobe:") + Paths::target_safety + ":step { @calls = count(); }"});
  ASSERT_TRUE(bpftrace.wait_for_line("Attaching", milliseconds(30000)))
      << "bpftrace did not attach\n"
      << bpftrace.wait(milliseconds(1000)).describe();
  const std::string trace = file("two.atrace");
  Result r = record(trace, "step", {Paths::target_safety, "jmp", "6", tag_arg()});
  bpftrace.signal(SIGINT);
  Result b = bpftrace.wait(milliseconds(30000));
  ASSERT_TRUE(r.exited(0)) << r.describe();
  EXPECT_EQ(r.err.find("cannot probe"), std::string::npos) << r.describe();
  auto rep = report_json(trace);
  ASSERT_TRUE(rep);
  EXPECT_EQ(calls_of(*rep, "step"), 12);
  EXPECT_NE(b.out.find("@calls: 12"), std::string::npos) << b.describe();
}

// An atrace with --follow-forks has system-wide probes on tick(); a second
// atrace -p on the same process still classifies and traces it. No filter:
// tick() takes nanoseconds and reaches --filter-min-calls after about a
// second at 1 kHz, so the default filter would detach it at a moment that
// depends on how long the second recorder took (it did, once, after 1,047
// of 1,289 calls).
TEST_F(Safety, FollowForksThenPidOnOneFunction) {
  const std::string first = file("first.atrace"), second = file("second.atrace");
  Child a({Paths::atrace, "record", "-o", first, "--select=tick", "--follow-forks", "--no-kernel",
           "--filter=off", "--", Paths::target_threads, "--forever", "60", tag_arg()});
  auto pid_line = a.wait_for_line("pid=", milliseconds(30000));
  ASSERT_TRUE(pid_line) << "the target did not start";
  ASSERT_TRUE(a.wait_for_line("ready", milliseconds(30000)));
  const std::string pid = pid_line->substr(4);
  Result b = run({Paths::atrace, "record", "-o", second, "--select=tick", "--no-kernel",
                  "--filter=off", "--duration=0.5", "-p", pid});
  ASSERT_TRUE(b.exited(0)) << b.describe();
  EXPECT_EQ(b.err.find("cannot probe"), std::string::npos) << b.describe();
  kill(std::stoi(pid), SIGTERM);
  Result ra = a.wait(milliseconds(30000));
  ASSERT_TRUE(ra.exited(0)) << ra.describe();
  auto ticks = printed_count(ra.out, "tick");
  ASSERT_TRUE(ticks) << ra.describe();
  auto rep_a = report_json(first);
  auto rep_b = report_json(second);
  ASSERT_TRUE(rep_a && rep_b);
  EXPECT_EQ(calls_of(*rep_a, "tick"), *ticks) << (*rep_a)["detached"].dump();
  EXPECT_EQ((*rep_a)["orphan_exits"], 0);
  // The second saw half a second of the ~1 kHz ticks. Attached to a
  // running process, it may open with exits without entries: calls that
  // began between the attach of its return probes and that of its entry
  // probes (docs/safety.md). None anywhere else: all come before the first
  // entry (the target calls tick() on one thread).
  EXPECT_GT(calls_of(*rep_b, "tick"), 10);
  EXPECT_LT(calls_of(*rep_b, "tick"), *ticks);
  Result script = run({Paths::atrace, "script", "-i", second});
  ASSERT_TRUE(script.exited(0)) << script.describe();
  const size_t first_entry = script.out.find("entry:");
  ASSERT_NE(first_entry, std::string::npos);
  long exits_before = 0;
  for (size_t at = script.out.find("exit:"); at < first_entry;
       at = script.out.find("exit:", at + 1))
    ++exits_before;
  EXPECT_EQ((*rep_b)["orphan_exits"].get<long>(), exits_before) << script.out.substr(0, 2000);
}

// Stopped while 4 threads call worker_step() as fast as they can: no exit
// without its entry, every call complete or unfinished, 20 times, in both
// attach modes.
TEST_F(Safety, StopUnderLoadLeavesNoHalfSeenCalls) {
  for (const char* mode : {"--attach=multi", "--attach=perf"}) {
    long long recorded = 0;  // over the 10 stops: the check is not vacuous
    for (int i = 0; i < 10; ++i) {
      const std::string trace = file("stop.atrace");
      Result r = record(trace, "worker_step", {Paths::target_threads, "400000", tag_arg()},
                        {mode, "--no-kernel", "--filter=off", "--duration=0.6"});
      ASSERT_TRUE(r.exited(0)) << r.describe();
      auto rep = report_json(trace);
      ASSERT_TRUE(rep);
      ASSERT_EQ((*rep)["orphan_exits"], 0) << mode << " stop " << i;
      EXPECT_LE(function_field(*rep, "worker_step", "unfinished"), 4) << mode << " stop " << i;
      // A stop may come before the first call on a loaded machine (no
      // call, nothing to check); over ten stops, calls are recorded.
      recorded += std::max(calls_of(*rep, "worker_step"), 0LL);
    }
    EXPECT_GT(recorded, 0) << mode << ": no call recorded in 10 stops";
  }
}

// Launch mode: atrace's forked child runs atrace's code up to its execve;
// the first event of the target is its exec.
TEST_F(Safety, LaunchRecordsFromTheExec) {
  const std::string trace = file("launch.atrace");
  Result r = record(trace, "", {"/bin/true"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  Result s = run({Paths::atrace, "script", "-i", trace});
  ASSERT_TRUE(s.exited(0)) << s.describe();
  const std::string first = s.out.substr(0, s.out.find('\n'));
  EXPECT_NE(first.find("exec:"), std::string::npos) << s.out.substr(0, 2000);
  EXPECT_EQ(s.out.find("rt_sigprocmask"), std::string::npos)
      << "atrace's own pre-exec system calls were recorded\n"
      << s.out.substr(0, 2000);
}

}  // namespace
}  // namespace atrace::it
