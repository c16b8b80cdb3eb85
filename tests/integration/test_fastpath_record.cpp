// record --fast-path on a running process (issue 35): its functions are
// patched to record in the process itself, every call is counted exactly,
// the program computes what it computes untraced, and its code is given
// back when atrace ends.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "tests/integration/fixture.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

constexpr const char* kTarget = TARGET_FASTPATH_RECORD_BIN;

class FastPathRecord : public IntegrationTest {};

TEST_F(FastPathRecord, EveryCallCountedAndTheProgramUnchanged) {
  Child reference({kTarget, "-"});
  Result ref = reference.wait(milliseconds(30000));
  ASSERT_TRUE(ref.exited(0)) << ref.describe();

  const std::string dir = file("fastpath");
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  Child target({kTarget, dir});
  const std::string out = file("fastpath.data");
  // Spelled out: =all is what bare --fast-path means (the other suites).
  Child atrace({Paths::atrace, "record", "-p", std::to_string(target.pid()), "--fast-path=all",
                "--filter=off", "--select=work,leaf,recurse,jumper,jump_loop", "-o", out});
  // The target runs its workload once it sees itself patched, then says so.
  const std::string done = dir + "/done";
  struct stat st {};
  for (int i = 0; i < 600 && stat(done.c_str(), &st) != 0 && atrace.running(); i++)
    std::this_thread::sleep_for(milliseconds(50));
  ASSERT_EQ(stat(done.c_str(), &st), 0) << "the target never ran its workload\n"
                                        << atrace.wait(milliseconds(5000)).describe();
  atrace.signal(SIGINT);
  Result r = atrace.wait(milliseconds(30000));
  ASSERT_TRUE(r.exited(0)) << r.describe();
  EXPECT_NE(r.err.find("5 functions patched"), std::string::npos) << r.err;
  // It waits until work() is given back, then says whether the byte is the
  // one it started with.
  Result t = target.wait(milliseconds(30000));
  ASSERT_TRUE(t.exited(0)) << t.describe();
  EXPECT_EQ(t.out, ref.out + "restored same\n");
  unlink(done.c_str());
  rmdir(dir.c_str());

  auto rep = report_json(out);
  ASSERT_TRUE(rep);
  EXPECT_EQ((*rep)["lost_events"], 0);
  EXPECT_EQ(calls_of(*rep, "work"), 20000);
  EXPECT_EQ(calls_of(*rep, "leaf"), 40000);
  EXPECT_EQ(function_field(*rep, "work", "unfinished"), 0);
  EXPECT_EQ(function_field(*rep, "leaf", "unfinished"), 0);
  // One chain 2,001 deep: the first 1,024 frames fill the thread's shadow
  // stack and are timed; the deeper ones are counted, not timed.
  EXPECT_EQ(calls_of(*rep, "recurse"), 2001);
  EXPECT_EQ(function_field(*rep, "recurse", "untimed"), 2001 - 1024);
  // Every jumper() call was left by longjmp: found gone at jump_loop's return.
  EXPECT_EQ(calls_of(*rep, "jump_loop"), 1);
  EXPECT_EQ(calls_of(*rep, "jumper"), 300);
  EXPECT_EQ(function_field(*rep, "jumper", "abandoned"), 300);
  // The calls are on the threads that made them: 60,000 function events
  // (work and leaf, entries and exits) on each of the two threads, named by
  // their thread pointers; none left out as a thread atrace could not name.
  auto threads = report_json(out, {"--threads"});
  ASSERT_TRUE(threads);
  int busy = 0, main_thread = 0;
  for (const auto& th : (*threads)["threads"]) {
    if (th["events"].get<long long>() < 60000) continue;
    busy++;
    main_thread += th["tid"] == th["pid"];
    EXPECT_EQ(th["pid"], target.pid());
  }
  EXPECT_EQ(busy, 2) << (*threads)["threads"].dump();
  EXPECT_EQ(main_thread, 1);
  EXPECT_EQ(r.err.find("could not name"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace atrace::it
