// A recorder killed with SIGKILL mid-run: its probes die with its file
// descriptors, the target runs on untouched, and the file it leaves behind
// is read by `atrace report` (index rebuilt by scanning, exit status 0) with
// every event up to about a second before the kill.
#include <signal.h>

#include <thread>

#include "tests/integration/fixture.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

class KilledRecorder : public IntegrationTest {};

TEST_F(KilledRecorder, LeavesAReadableFileAndAnUntouchedTarget) {
  std::string out = file("killed.data");
  Child atrace({Paths::atrace, "record", "-o", out, "--select=tick", "--", Paths::target_threads,
                "--forever", "60", tag_arg()});
  auto pid_line = atrace.wait_for_line("pid=", milliseconds(20000));
  ASSERT_TRUE(pid_line) << atrace.wait(milliseconds(1000)).describe();
  const pid_t target = static_cast<pid_t>(std::stol(pid_line->substr(4)));
  auto addr_line = atrace.wait_for_line("tick_addr=", milliseconds(5000));
  ASSERT_TRUE(addr_line);
  const uint64_t tick = std::stoull(addr_line->substr(10), nullptr, 16);

  // Long enough for the writer's one-second age flush to have run.
  std::this_thread::sleep_for(milliseconds(2500));
  ASSERT_EQ(::kill(atrace.pid(), SIGKILL), 0);
  Result killed = atrace.wait(milliseconds(10000));
  EXPECT_EQ(killed.term_signal, SIGKILL) << killed.describe();

  // The probe went with the recorder: no int3 left at tick's entry, and the
  // target is still running.
  std::this_thread::sleep_for(milliseconds(200));
  auto code = read_process_memory(target, tick, 1);
  ASSERT_TRUE(code) << "target " << target << " is gone";
  EXPECT_NE((*code)[0], 0xcc) << "a uprobe outlived the killed recorder";
  EXPECT_EQ(::kill(target, 0), 0);

  Result rep_run = run({Paths::atrace, "report", "--format=json", "-i", out});
  EXPECT_TRUE(rep_run.exited(0)) << rep_run.describe();
  EXPECT_NE(rep_run.err.find("warning"), std::string::npos) << rep_run.describe();
  auto rep = nlohmann::json::parse(rep_run.out, nullptr, false);
  ASSERT_FALSE(rep.is_discarded()) << rep_run.describe();
  // About 1 ms per tick for ~2.5 s, of which at most ~1 s may be lost.
  EXPECT_GE(calls_of(rep, "tick"), 500) << rep_run.out;
  // The recorder died before counting its losses: unknown, not 0 (as
  // `atrace info` says "not recorded").
  EXPECT_TRUE(rep["lost_events"].is_null()) << rep["lost_events"];

  ::kill(target, SIGTERM);
  for (int i = 0; i < 100 && ::kill(target, 0) == 0; ++i)
    std::this_thread::sleep_for(milliseconds(50));
  EXPECT_NE(::kill(target, 0), 0) << "the target did not end on SIGTERM";
}

}  // namespace
}  // namespace atrace::it
