// record -p PID --fast-path --follow-forks (issue 35): each fork child of
// the patched process, and a child's child, gets a ring of its own and its
// calls are recorded as its own; the calls a child makes before atrace
// gives it the ring are counted and said; an exec'd child's new program is
// not patched (said); the program computes what it computes untraced; the
// code of every process still alive at the end is given back.
// With a launched command (record --fast-path --follow-forks -- CMD),
// atrace is the tracer of every process of the command: a fork child gets
// its ring at its first stop, before its first instruction, so that every
// call is recorded; a killed atrace leaves them all running.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <regex>
#include <set>
#include <thread>

#include "tests/integration/fixture.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

constexpr const char* kTarget = TARGET_FASTPATH_FORKS_BIN;

class FastPathForks : public IntegrationTest {};

// The number in atrace's "N calls of fork children not recorded", 0 when
// it did not say it.
long long calls_before_ring(const std::string& err) {
  std::smatch m;
  static const std::regex re("([0-9,]+) calls? of fork children not recorded");
  if (!std::regex_search(err, m, re)) return 0;
  std::string digits = m[1];
  digits.erase(std::remove(digits.begin(), digits.end(), ','), digits.end());
  return std::stoll(digits);
}

TEST_F(FastPathForks, EachChildRecordedInItsOwnRing) {
  Child reference({kTarget, "-"});
  Result ref = reference.wait(milliseconds(30000));
  ASSERT_TRUE(ref.exited(0)) << ref.describe();

  const std::string dir = file("forks");
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  Child target({kTarget, dir});
  const std::string out = file("forks.data");
  Child atrace({Paths::atrace, "record", "-p", std::to_string(target.pid()), "--fast-path",
                "--follow-forks", "--filter=off", "--select=work,forker", "-o", out});
  const std::string done = dir + "/done";
  struct stat st {};
  for (int i = 0; i < 600 && stat(done.c_str(), &st) != 0 && atrace.running(); i++)
    std::this_thread::sleep_for(milliseconds(50));
  ASSERT_EQ(stat(done.c_str(), &st), 0) << "the target never ran its workload\n"
                                        << atrace.wait(milliseconds(5000)).describe();
  atrace.signal(SIGINT);
  Result r = atrace.wait(milliseconds(30000));
  ASSERT_TRUE(r.exited(0)) << r.describe();
  // The parent and the one child alive at the end (A) each waited for
  // work()'s first byte to come back and found the one they started with.
  Result t = target.wait(milliseconds(30000));
  ASSERT_TRUE(t.exited(0)) << t.describe();
  EXPECT_EQ(t.out, ref.out);
  EXPECT_NE(t.out.find("parent restored same\nA exited 0\n"), std::string::npos) << t.out;
  unlink(done.c_str());
  rmdir(dir.c_str());

  // A, G and C got a ring; only A was alive at the end to be given its
  // code back (G exited, C exec'd); C's exec is said.
  EXPECT_NE(r.err.find("3 fork children given a ring of its own (1 undone at the end)"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("1 fork child exec'd"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("no ring given"), std::string::npos) << r.err;

  auto rep = report_json(out, {"--threads"});
  ASSERT_TRUE(rep);
  EXPECT_EQ((*rep)["lost_events"], 0);
  const nlohmann::json* work = find_function(*rep, "work");
  ASSERT_NE(work, nullptr) << function_names(*rep);
  // Per process (each one thread, tid = pid): the parent 100, A 200 and
  // the 7 it made before its ring unless the ring came first, G 300, C 50
  // (its exec'd program's 60 not: not patched).
  long long parent = -1, a = -1, g = -1, c = -1;
  int processes = 0;
  for (const auto& th : (*work)["per_thread"]) {
    processes++;
    const long long n = th["calls"];
    EXPECT_EQ(th["unfinished"], 0) << th.dump();
    if (th["tid"] == target.pid()) parent = n;
    else if (n >= 200 && n <= 207) a = n;
    else if (n == 300) g = n;
    else if (n == 50) c = n;
  }
  EXPECT_EQ(processes, 4) << (*work)["per_thread"].dump();
  EXPECT_EQ(parent, 100);
  EXPECT_EQ(g, 300);
  EXPECT_EQ(c, 50);
  ASSERT_GE(a, 200) << (*work)["per_thread"].dump();
  // A's calls before its ring: not recorded, counted, said.
  EXPECT_EQ(a + calls_before_ring(r.err), 207) << r.err;
  EXPECT_EQ(calls_of(*rep, "work"), 100 + 207 + 300 + 50 - calls_before_ring(r.err));
  // forker(): the parent's 2 calls, A's 1; the children's returns from the
  // call their parent entered are exits of calls open at the fork (as on
  // the kernel path), none left unfinished.
  // So 2 in the parent, A's own and its return (2), G's and C's returns.
  EXPECT_EQ(calls_of(*rep, "forker"), 6);
  EXPECT_EQ(function_field(*rep, "forker", "unfinished"), 0);
}

// The same program launched: patched before main, each child ringed at
// its fork's first stop (the target exits 3 from a child that finds no
// ring of its own at its first look), every call of every process
// recorded, A's 7 made right after the fork included, and the program C
// execs patched too, at its entry point, its 60 calls recorded under the
// same function.
TEST_F(FastPathForks, LaunchedCommandChildrenRingedBeforeTheirFirstInstruction) {
  Child reference({kTarget, "-"});
  Result ref = reference.wait(milliseconds(30000));
  ASSERT_TRUE(ref.exited(0)) << ref.describe();

  const std::string dir = file("forks");
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  const std::string out = file("forks.data");
  Result r = run({Paths::atrace, "record", "--fast-path", "--follow-forks", "--filter=off",
                  "--select=work,forker", "-o", out, "--", kTarget, dir, "launched"},
                 milliseconds(60000));
  ASSERT_TRUE(r.exited(0)) << r.describe();
  EXPECT_EQ(r.out, ref.out);
  unlink((dir + "/done").c_str());
  rmdir(dir.c_str());
  EXPECT_NE(r.err.find("3 fork children given a ring of its own"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("exec'd by process"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(": 2 functions patched, the program stopped"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("not patched"), std::string::npos) << r.err;
  EXPECT_EQ(calls_before_ring(r.err), 0) << r.err;
  EXPECT_EQ(r.err.find("no ring given"), std::string::npos) << r.err;

  auto rep = report_json(out, {"--threads"});
  ASSERT_TRUE(rep);
  EXPECT_EQ((*rep)["lost_events"], 0);
  EXPECT_EQ((*rep)["orphan_exits"], 0);
  const nlohmann::json* work = find_function(*rep, "work");
  ASSERT_NE(work, nullptr) << function_names(*rep);
  std::multiset<long long> per_process;
  for (const auto& th : (*work)["per_thread"]) {
    per_process.insert(th["calls"].get<long long>());
    EXPECT_EQ(th["unfinished"], 0) << th.dump();
  }
  // The parent, A (7 + 200), G, C (50, then its exec'd program's 60).
  EXPECT_EQ(per_process, (std::multiset<long long>{100, 207, 300, 110}))
      << (*work)["per_thread"].dump();
  EXPECT_EQ(calls_of(*rep, "work"), 717);
  EXPECT_EQ(calls_of(*rep, "forker"), 6);
  EXPECT_EQ(function_field(*rep, "forker", "unfinished"), 0);
}

// atrace killed (SIGKILL) while it follows a patched bash and its
// subshells: the script runs to its end and prints what it prints
// untraced; no process is left stopped or killed with atrace.
TEST_F(FastPathForks, KilledAtraceLeavesTheLaunchedTreeRunning) {
  const std::string script =
      "echo started; sleep 0.5; for i in 1 2 3 4 5; do (echo sub $i; exit $i); echo st $?; "
      "done; echo $(echo nested) end";
  Child untraced({"/bin/bash", "-c", script});
  Result ref = untraced.wait(milliseconds(30000));
  ASSERT_TRUE(ref.exited(0)) << ref.describe();

  Child atrace({Paths::atrace, "record", "--fast-path", "--follow-forks", "--select=libc.so.6:*",
                "-o", file("killed.data"), "--", "/bin/bash", "-c", script});
  // bash runs its first line only once patched (launch mode: at its entry).
  ASSERT_TRUE(atrace.wait_for_line("started", milliseconds(60000)))
      << atrace.wait(milliseconds(5000)).describe();
  atrace.signal(SIGKILL);
  // bash writes on into the pipe atrace's test holds, to its last line.
  EXPECT_TRUE(atrace.wait_for_line("nested end", milliseconds(30000))) << atrace.out();
  Result r = atrace.wait(milliseconds(30000));
  EXPECT_EQ(r.term_signal, SIGKILL) << r.describe();
  EXPECT_FALSE(r.timed_out) << r.describe();
  EXPECT_EQ(r.out, ref.out);
}

}  // namespace
}  // namespace atrace::it
