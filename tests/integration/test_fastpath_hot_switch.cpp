// record -p PID --fast-path=hot (issue 35, docs/fast-path.md "Hot
// functions"): the kernel's probes first; the function the relevance filter
// finds too short is patched instead of detached, in one stop, so that its
// calls are all recorded once: the kernel's before the switch, the fast
// path's after. A process with a C++ unwinder mapped is refused.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "tests/integration/fixture.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

constexpr const char* kTarget = TARGET_FASTPATH_HOT_SWITCH_BIN;

class FastPathHotSwitch : public IntegrationTest {};

TEST_F(FastPathHotSwitch, TheHotFunctionIsPatchedInsteadAndEveryCallCountedOnce) {
  Child reference({kTarget, "-"});
  Result ref = reference.wait(milliseconds(30000));
  ASSERT_TRUE(ref.exited(0)) << ref.describe();

  const std::string dir = file("hot");
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  Child target({kTarget, dir});
  const std::string out = file("hot.data");
  // The default filter (absolute, 2 us): hot() is far shorter, other()
  // sleeps 200 us a call.
  Child atrace({Paths::atrace, "record", "-p", std::to_string(target.pid()), "--fast-path=hot",
                "--select=hot,other", "-o", out});
  const std::string done = dir + "/done";
  struct stat st {};
  for (int i = 0; i < 900 && stat(done.c_str(), &st) != 0 && atrace.running(); i++)
    std::this_thread::sleep_for(milliseconds(50));
  ASSERT_EQ(stat(done.c_str(), &st), 0) << "the target never finished its workload\n"
                                        << atrace.wait(milliseconds(5000)).describe();
  atrace.signal(SIGINT);
  Result r = atrace.wait(milliseconds(60000));
  ASSERT_TRUE(r.exited(0)) << r.describe();
  EXPECT_NE(r.err.find("patched hot instead of detaching it"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("1 function patched instead of detached"), std::string::npos) << r.err;
  // Its code given back byte for byte: no jump, no kernel breakpoint left.
  Result t = target.wait(milliseconds(40000));
  ASSERT_TRUE(t.exited(0)) << t.describe();
  EXPECT_EQ(t.out, ref.out + "restored same\n");
  long long made = 0;
  std::ifstream(dir + "/count") >> made;
  unlink((dir + "/count").c_str());
  unlink(done.c_str());
  rmdir(dir.c_str());
  ASSERT_GT(made, 200 * 1000);

  auto rep = report_json(out);
  ASSERT_TRUE(rep);
  EXPECT_EQ((*rep)["lost_events"], 0);
  // Every call once: the kernel's part and the fast path's, no loss, no
  // double count; other() stayed on the kernel's probes.
  EXPECT_EQ(calls_of(*rep, "hot"), made);
  EXPECT_EQ(function_field(*rep, "hot", "unfinished"), 0);
  EXPECT_EQ(calls_of(*rep, "other"), 200);
  bool switched = false;
  for (const auto& d : (*rep)["detached"])
    if (d["name"] == "hot") {
      EXPECT_EQ(d["rule"], "patched instead") << d.dump();
      switched = true;
    }
  EXPECT_TRUE(switched) << (*rep)["detached"].dump();
  // Its numbers are whole: not marked detached (partial).
  for (const auto& f : (*rep)["functions"]) {
    if (f["name"] == "hot") {
      EXPECT_EQ(f["detached"], false) << f.dump();
    }
  }
  auto info = run({Paths::atrace, "info", "-i", out});
  EXPECT_NE(info.out.find("patched instead"), std::string::npos) << info.out;
}

TEST_F(FastPathHotSwitch, AProcessWithTheCppUnwinderIsRefusedWithOneLine) {
  // This test program maps libstdc++ and libgcc_s (the unwinder).
  Result r = run({Paths::atrace, "record", "-p", std::to_string(getpid()), "--fast-path=hot",
                  "--select=libc.so.6:getppid", "-o", file("cpp.data")});
  EXPECT_FALSE(r.exited(0)) << r.describe();
  const std::string line = expect_one_error_line(r);
  EXPECT_NE(line.find("--fast-path=hot"), std::string::npos) << line;
  EXPECT_NE(line.find("_Unwind_RaiseException"), std::string::npos) << line;
  EXPECT_NE(line.find("unwind guard"), std::string::npos) << line;
  struct stat st {};
  EXPECT_NE(stat(file("cpp.data").c_str(), &st), 0) << "no trace is written";
}

}  // namespace
}  // namespace atrace::it
