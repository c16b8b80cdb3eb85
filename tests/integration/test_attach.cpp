// Attach mode: atrace joins a process already running, records until SIGINT
// or --duration, detaches, and the process goes on as if nothing happened:
// its code restored, its output right, its exit status 0.
#include <signal.h>

#include <thread>

#include "tests/integration/fixture.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

class Attach : public IntegrationTest {
 protected:
  // After atrace ended: the uprobe is gone from tick()'s code, the target is
  // running (not stopped, not dead) and keeps calling tick(); then it is
  // stopped and its own count must exceed what was recorded.
  void expect_target_untouched(ForeverTarget& target, long long recorded) {
    EXPECT_EQ(target.code_now(), target.original_code())
        << "tick() still patched after atrace exited: a uprobe was left behind";
    expect_no_uprobe_events_left();
    ASSERT_TRUE(target.alive()) << "the target died while atrace was attached";
    auto state = process_state(target.pid());
    ASSERT_TRUE(state);
    EXPECT_TRUE(*state == 'R' || *state == 'S') << "target state " << *state;
    // Let it run on untraced for a while, then end it normally.
    std::this_thread::sleep_for(milliseconds(200));
    Result end = target.stop();
    ASSERT_TRUE(end.exited(0)) << end.describe();
    auto own = printed_count(end.out, "tick");
    ASSERT_TRUE(own) << end.describe();
    EXPECT_GE(recorded, 1);
    EXPECT_LE(recorded, *own);
    EXPECT_GT(*own, recorded) << "tick() went on after atrace detached";
  }
};

TEST_F(Attach, MidRunUntilSigint) {
  ForeverTarget target(tag_);
  ASSERT_TRUE(target.ok()) << target.startup_output();
  std::this_thread::sleep_for(milliseconds(300));  // well into its run

  std::string out = file("attach.data");
  Child atrace(
      {Paths::atrace, "record", "-p", std::to_string(target.pid()), "--select=tick", "-o", out});
  // The int3 appearing in tick() says the probe is in: from then on, record
  // for half a second. (If atrace patches some other site, go on after 10 s.)
  bool probed = target.wait_until_probed(milliseconds(10000), atrace);
  std::this_thread::sleep_for(milliseconds(500));
  ASSERT_TRUE(atrace.running()) << "atrace ended before SIGINT\n"
                                << atrace.wait(milliseconds(1000)).describe();
  atrace.signal(SIGINT);
  Result r = atrace.wait(milliseconds(20000));
  ASSERT_TRUE(r.exited(0)) << r.describe();
  EXPECT_TRUE(probed) << "tick()'s code never changed while atrace was attached";

  auto rep = report_json(out);
  ASSERT_TRUE(rep);
  EXPECT_EQ((*rep)["lost_events"], 0);
  EXPECT_EQ((*rep)["pid"], target.pid());
  expect_target_untouched(target, calls_of(*rep, "tick"));
}

TEST_F(Attach, DurationEndsRecording) {
  ForeverTarget target(tag_);
  ASSERT_TRUE(target.ok()) << target.startup_output();

  std::string out = file("duration.data");
  Result r = run({Paths::atrace, "record", "-p", std::to_string(target.pid()), "--select=tick",
                  "--duration=1", "-o", out},
                 milliseconds(30000));
  ASSERT_TRUE(r.exited(0)) << r.describe();
  // At least the second it was asked to record (the target runs forever:
  // without --duration, run() would time out and fail above).
  EXPECT_GE(r.elapsed.count(), 1000);

  auto rep = report_json(out);
  ASSERT_TRUE(rep);
  EXPECT_EQ((*rep)["lost_events"], 0);
  long long recorded = calls_of(*rep, "tick");
  // ~1000 ticks a second at most: a loose sanity bound on a one-second window.
  EXPECT_LE(recorded, 2000);
  expect_target_untouched(target, recorded);
}

TEST_F(Attach, SigtermEndsRecordingToo) {
  ForeverTarget target(tag_);
  ASSERT_TRUE(target.ok()) << target.startup_output();
  std::string out = file("sigterm.data");
  Child atrace(
      {Paths::atrace, "record", "-p", std::to_string(target.pid()), "--select=tick", "-o", out});
  target.wait_until_probed(milliseconds(10000), atrace);
  std::this_thread::sleep_for(milliseconds(300));
  atrace.signal(SIGTERM);
  Result r = atrace.wait(milliseconds(20000));
  ASSERT_TRUE(r.exited(0)) << r.describe();
  auto rep = report_json(out);
  ASSERT_TRUE(rep);
  expect_target_untouched(target, calls_of(*rep, "tick"));
}

// Recording stops by itself when the traced process exits.
TEST_F(Attach, EndsWhenTargetExits) {
  ForeverTarget target(tag_, 3);  // exits by itself after 3 s
  ASSERT_TRUE(target.ok()) << target.startup_output();
  std::string out = file("exit.data");
  Child atrace(
      {Paths::atrace, "record", "-p", std::to_string(target.pid()), "--select=tick", "-o", out});
  // Reap the target as soon as it exits, as a real parent would: a zombie
  // left by this test must not be what atrace waits for.
  auto deadline = std::chrono::steady_clock::now() + scaled(milliseconds(30000));
  while (atrace.running() && std::chrono::steady_clock::now() < deadline) {
    target.alive();
    std::this_thread::sleep_for(milliseconds(20));
  }
  Result r = atrace.wait(milliseconds(1000));
  ASSERT_TRUE(r.exited(0)) << "atrace did not end with its target\n" << r.describe();
  Result end = target.stop();  // already gone: just collects its output
  ASSERT_TRUE(end.exited(0)) << end.describe();
  auto rep = report_json(out);
  ASSERT_TRUE(rep);
  long long recorded = calls_of(*rep, "tick");
  EXPECT_GE(recorded, 1);
  EXPECT_LE(recorded, printed_count(end.out, "tick").value_or(0));
}

}  // namespace
}  // namespace atrace::it
