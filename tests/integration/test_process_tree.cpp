// --follow-forks through whole process trees (issue 32): a child that
// execs another program (fork+exec, vfork+exec, posix_spawn, both sides of
// a shell pipeline) has the selectors resolved again for that program and
// is traced on; a forked child's return from a call entered before the
// fork is a call of the child; an exec ends the calls open in the old
// program. Counts are exact, per process (`report --pid`) and per program:
// target_proctree and target_proctree_child print their own, and uftrace,
// which follows fork and exec itself, counts the same on -pg builds of the
// same sources.
#include <map>
#include <sstream>

#include "tests/integration/fixture.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

constexpr const char* kTree = TARGET_PROCTREE_BIN;
constexpr const char* kChild = TARGET_PROCTREE_CHILD_BIN;
constexpr const char* kTreePg = TARGET_PROCTREE_PG_BIN;
constexpr const char* kChildPg = TARGET_PROCTREE_CHILD_PG_BIN;
constexpr const char* kSelect = "main,tree_*";
constexpr long kLaunches = 2;  // children target_proctree starts
constexpr long kLeaves = 3;    // target_proctree_child's N

// Every "pid=P" line of a target's output (a child's own lines included).
std::vector<long> printed_pids(const std::string& out) {
  std::vector<long> pids;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    const size_t at = line.find("pid=");
    if (at != std::string::npos && (at == 0 || line[at - 1] == ' '))
      pids.push_back(std::stol(line.substr(at + 4)));
  }
  return pids;
}

// A function's calls summed over the programs that have one of that name
// (main is one function per program); -1 when none has.
long long calls_named(const nlohmann::json& report, const std::string& fn,
                      const std::string& module = "") {
  long long calls = -1;
  for (const auto& f : report["functions"]) {
    if (base_name(f["name"].get<std::string>()) != fn) continue;
    if (!module.empty() && f["module"] != module) continue;
    calls = (calls < 0 ? 0 : calls) + f["calls"].get<long long>();
  }
  return calls;
}

// A function's calls on one thread (report --threads), -1 when none.
long long calls_on_thread(const nlohmann::json& report, const std::string& fn, long tid) {
  long long calls = -1;
  for (const auto& f : report["functions"]) {
    if (base_name(f["name"].get<std::string>()) != fn) continue;
    for (const auto& t : f["per_thread"])
      if (t["tid"] == tid) calls = (calls < 0 ? 0 : calls) + t["calls"].get<long long>();
  }
  return calls;
}

// The same for `unfinished`.
long long unfinished_named(const nlohmann::json& report, const std::string& fn) {
  long long n = 0;
  for (const auto& f : report["functions"])
    if (base_name(f["name"].get<std::string>()) == fn) n += f["unfinished"].get<long long>();
  return n;
}

const std::string kTreeName = "target_proctree";
const std::string kChildName = "target_proctree_child";

class ProcessTree : public IntegrationTest {
 protected:
  // atrace record --follow-forks --filter=off --select=main,tree_* -- CMD
  Result record_tree(const std::string& out, const std::vector<std::string>& cmd) {
    return record(out, kSelect, cmd, {"--follow-forks", "--filter=off"});
  }
  // A function's calls in one process (-1: none there).
  long long calls_in(const std::string& trace, long pid, const char* fn) {
    auto rep = report_json(trace, {"--pid=" + std::to_string(pid)});
    return rep ? calls_named(*rep, fn) : -2;
  }

  // target_proctree MODE kLaunches target_proctree_child kLeaves: each
  // program's functions in the processes that ran it, and none of the
  // parent's in a child (the calls it inherited end at its exec).
  void expect_launches(const std::string& mode) {
    const std::string out = file(mode + ".data");
    Result r = record_tree(
        out, {kTree, mode, std::to_string(kLaunches), kChild, std::to_string(kLeaves), tag_arg()});
    ASSERT_TRUE(r.exited(0)) << r.describe();
    const std::vector<long> pids = printed_pids(r.out);
    ASSERT_EQ(pids.size(), static_cast<size_t>(1 + kLaunches)) << r.out;
    // The child's program was probed when the first child exec'd it.
    EXPECT_NE(r.err.find(std::string(kChild) + " exec'd by process"), std::string::npos) << r.err;
    auto all = report_json(out);
    ASSERT_TRUE(all);
    EXPECT_EQ((*all)["lost_events"], 0);
    EXPECT_EQ((*all)["orphan_exits"], 0);
    // Per program: each main is its program's.
    EXPECT_EQ(calls_named(*all, "main", kTreeName), 1) << function_names(*all);
    EXPECT_EQ(calls_named(*all, "main", kChildName), kLaunches) << function_names(*all);
    EXPECT_EQ(calls_named(*all, "main"), 1 + kLaunches);
    EXPECT_EQ(calls_named(*all, "tree_launch"), kLaunches);
    EXPECT_EQ(calls_named(*all, "tree_work"), 1);
    EXPECT_EQ(calls_named(*all, "tree_step", kChildName), kLaunches);
    EXPECT_EQ(calls_named(*all, "tree_leaf", kChildName), kLaunches * kLeaves);
    EXPECT_EQ(unfinished_named(*all, "main"), 0);
    EXPECT_EQ(unfinished_named(*all, "tree_launch"), 0);
    // The parent printed its pid first, then each child.
    EXPECT_EQ(calls_in(out, pids[0], "main"), 1);
    EXPECT_EQ(calls_in(out, pids[0], "tree_launch"), kLaunches);
    EXPECT_EQ(calls_in(out, pids[0], "tree_step"), -1);
    for (size_t i = 1; i < pids.size(); ++i) {
      EXPECT_EQ(calls_in(out, pids[i], "main"), 1) << "child " << pids[i];
      EXPECT_EQ(calls_in(out, pids[i], "tree_step"), 1) << "child " << pids[i];
      EXPECT_EQ(calls_in(out, pids[i], "tree_leaf"), kLeaves) << "child " << pids[i];
      EXPECT_EQ(calls_in(out, pids[i], "tree_launch"), -1) << "child " << pids[i];
    }
    expect_no_uprobe_events_left();
  }
};

TEST_F(ProcessTree, ForkExec) { expect_launches("fork-exec"); }
TEST_F(ProcessTree, VforkExec) { expect_launches("vfork-exec"); }
TEST_F(ProcessTree, PosixSpawn) { expect_launches("spawn"); }

// sh -c 'A | B' with two programs: the shell (stripped: nothing of its
// own to match) is followed to the first program that matches, the other
// side is probed at its exec, whichever comes first; the left side also
// forks (fork-return), and everything it prints goes through the pipe
// into the right side, which counts the lines (4).
TEST_F(ProcessTree, ShellPipeline) {
  const std::string out = file("pipe.data");
  const std::string line = std::string(kTree) + " fork-return 1 " + tag_arg() + " | " + kChild +
                           " 5 --drain " + tag_arg();
  Result r = record_tree(out, {"/bin/sh", "-c", line});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  const std::vector<long> pids = printed_pids(r.out);  // the right side's
  ASSERT_EQ(pids.size(), 1u) << r.out;
  EXPECT_EQ(printed_count(r.out, "tree_line").value_or(-1), 4) << r.out;
  auto all = report_json(out);
  ASSERT_TRUE(all);
  EXPECT_EQ((*all)["lost_events"], 0);
  EXPECT_EQ((*all)["orphan_exits"], 0);
  EXPECT_EQ(calls_named(*all, "main", kTreeName), 2) << function_names(*all);
  EXPECT_EQ(calls_named(*all, "main", kChildName), 1) << function_names(*all);
  EXPECT_EQ(calls_named(*all, "tree_forker"), 2);
  EXPECT_EQ(calls_named(*all, "tree_parent_side"), 1);
  EXPECT_EQ(calls_named(*all, "tree_child_side"), 1);
  EXPECT_EQ(calls_named(*all, "tree_step"), 1);
  EXPECT_EQ(calls_named(*all, "tree_leaf"), 5);
  EXPECT_EQ(calls_named(*all, "tree_line"), 4);
  EXPECT_EQ(calls_in(out, pids[0], "main"), 1);
  EXPECT_EQ(calls_in(out, pids[0], "tree_leaf"), 5);
  EXPECT_EQ(calls_in(out, pids[0], "tree_line"), 4);
  EXPECT_EQ(calls_in(out, pids[0], "tree_forker"), -1);
  expect_no_uprobe_events_left();
}

// A fork inside tree_forker(): the parent and the child both return from
// it, and from main; the child's returns are calls of the child (its
// thread's), not exits without an entry. `report --pid=CHILD` leaves the
// parent's events out, the entries of those two calls included: there the
// child has only its own (docs/kernel-events.md).
TEST_F(ProcessTree, ForkedChildReturnsFromCallsBeforeTheFork) {
  const std::string out = file("forkret.data");
  Result r = record_tree(out, {kTree, "fork-return", "2", tag_arg()});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  const std::vector<long> pids = printed_pids(r.out);  // parent, then "child pid=C"
  ASSERT_EQ(pids.size(), 2u) << r.out;
  auto all = report_json(out);
  ASSERT_TRUE(all);
  EXPECT_EQ((*all)["orphan_exits"], 0);
  EXPECT_EQ(calls_named(*all, "main"), 2) << function_names(*all);
  EXPECT_EQ(calls_named(*all, "tree_forker"), 2);
  EXPECT_EQ(unfinished_named(*all, "tree_forker"), 0);
  EXPECT_EQ(unfinished_named(*all, "main"), 0);
  EXPECT_EQ(calls_in(out, pids[0], "main"), 1);
  EXPECT_EQ(calls_in(out, pids[0], "tree_forker"), 1);
  EXPECT_EQ(calls_in(out, pids[0], "tree_parent_side"), 1);
  EXPECT_EQ(calls_in(out, pids[0], "tree_child_side"), -1);
  EXPECT_EQ(calls_in(out, pids[1], "tree_child_side"), 2);
  EXPECT_EQ(calls_in(out, pids[1], "tree_parent_side"), -1);
  // Each process is one thread: its tid is its pid.
  auto threads = report_json(out, {"--threads"});
  ASSERT_TRUE(threads);
  for (long pid : pids) {
    EXPECT_EQ(calls_on_thread(*threads, "main", pid), 1) << pid;
    EXPECT_EQ(calls_on_thread(*threads, "tree_forker", pid), 1) << pid;
  }
  EXPECT_EQ(calls_on_thread(*threads, "tree_child_side", pids[1]), 2);
}

// An exec ends the calls the old program had open: target_c re-execs
// itself from main (same file, probed already), so main is called twice,
// the first call unfinished at the exec, and nothing is left to pair the
// new program's returns with the old program's calls.
TEST_F(ProcessTree, ExecEndsTheOldProgramsCalls) {
  const std::string out = file("reexec.data");
  Result r = record(out, "main,leaf", {Paths::target_c, "3", "--reexec=1", tag_arg()},
                    {"--follow-forks", "--filter=off"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  auto all = report_json(out);
  ASSERT_TRUE(all);
  EXPECT_EQ((*all)["orphan_exits"], 0);
  EXPECT_EQ(calls_of(*all, "main"), 2);
  EXPECT_EQ(function_field(*all, "main", "unfinished"), 1);
  EXPECT_EQ(calls_of(*all, "leaf"), 2 * 3 * 3);
  EXPECT_EQ(function_field(*all, "leaf", "unfinished"), 0);
}

// uftrace (-pg builds of the same sources; it follows fork and exec
// itself) counts what atrace counts, function by function.
TEST_F(ProcessTree, UftraceCountsTheSameForkExecTree) {
  if (::system("command -v uftrace >/dev/null 2>&1") != 0) {
    if (in_ci()) FAIL() << "CI=true and uftrace is not installed";
    GTEST_SKIP() << "uftrace is not installed";
  }
  const std::string out = file("cross.data");
  const std::vector<std::string> args = {"fork-exec", std::to_string(kLaunches)};
  Result r = record_tree(out, {kTree, args[0], args[1], kChild, std::to_string(kLeaves)});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  auto ours = report_json(out);
  ASSERT_TRUE(ours);
  const std::string dir = file("uftrace.d");
  Result u = run({"uftrace", "record", "-d", dir, kTreePg, args[0], args[1], kChildPg,
                  std::to_string(kLeaves)});
  ASSERT_TRUE(u.exited(0)) << u.describe();
  Result rep = run({"uftrace", "report", "-d", dir, "-f", "call"});
  ASSERT_TRUE(rep.exited(0)) << rep.describe();
  // "  CALLS  NAME" lines.
  std::map<std::string, long> theirs;
  std::istringstream in(rep.out);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    long calls = 0;
    std::string name;
    if (words >> calls >> name) theirs[name] = calls;
  }
  for (const char* fn : {"main", "tree_launch", "tree_work", "tree_step", "tree_leaf"}) {
    ASSERT_TRUE(theirs.count(fn)) << fn << " not in uftrace's report:\n" << rep.out;
    EXPECT_EQ(calls_named(*ours, fn), theirs[fn]) << fn << "\n" << rep.out;
  }
  EXPECT_EQ(theirs["main"], 1 + kLaunches);
}

}  // namespace
}  // namespace atrace::it
