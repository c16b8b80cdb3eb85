// ExecFollower on real processes (ptrace of atrace's own child needs no
// privilege): the program a command execs is found and held, none is ever
// left stopped, signals reach the command unchanged while it is followed.
#include <gtest/gtest.h>
#include <limits.h>
#include <stdlib.h>

#include <string>
#include <vector>

#include "record/exec_follow.h"
#include "record/stop_signals.h"
#include "record/target.h"

using atrace::ExecFollower;
using atrace::ExecMatch;
using atrace::StopSignals;
using atrace::Target;

namespace {

std::string real(const char* path) {
  char buf[PATH_MAX];
  return realpath(path, buf) ? buf : path;
}

// A followed `sh -c SCRIPT`, released: the follower and the target.
struct Followed {
  explicit Followed(const std::string& script)
      : target(Target::launch_held("/bin/sh", {"sh", "-c", script}, false, 0, true)),
        follower(target.pid(), false) {
    target.release();
  }
  Target target;
  ExecFollower follower;
};

}  // namespace

TEST(ExecFollower, HoldsTheProgramThatMatchesThenLetsItGo) {
  StopSignals stop;
  Followed f("exec /bin/sh -c 'exit 5'");
  const std::string sh = real("/bin/sh");
  int seen = 0;
  // The second exec of sh is the one that matches.
  auto m = f.follower.run([&](const ExecMatch& e) { return e.exe == sh && ++seen == 2; }, stop);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->pid, f.target.pid());
  EXPECT_EQ(m->exe, sh);
  EXPECT_EQ(f.follower.processes(), std::vector<pid_t>{f.target.pid()});
  EXPECT_FALSE(f.target.exited()) << "held at its exec";
  f.follower.release();
  EXPECT_EQ(f.target.wait_exit(), 5);
}

TEST(ExecFollower, NoMatchRunsToTheEndAndSaysWhatRan) {
  StopSignals stop;
  Followed f("/bin/true; exec /usr/bin/env true");
  auto m = f.follower.run([](const ExecMatch&) { return false; }, stop);
  EXPECT_FALSE(m);
  EXPECT_EQ(f.follower.ran(),
            (std::vector<std::string>{real("/bin/sh"), real("/usr/bin/env"), real("/bin/true")}));
  ASSERT_TRUE(f.follower.top_status());
  f.target.reaped(*f.follower.top_status());
  EXPECT_EQ(f.target.wait_exit(), 0);
}

// A signal the command sends itself while followed is delivered as it
// would be untraced: its handler runs.
TEST(ExecFollower, SignalsReachTheFollowedCommand) {
  StopSignals stop;
  Followed f("trap 'exit 7' USR1; kill -USR1 $$; sleep 5");
  auto m = f.follower.run([](const ExecMatch&) { return false; }, stop);
  EXPECT_FALSE(m);
  ASSERT_TRUE(f.follower.top_status());
  f.target.reaped(*f.follower.top_status());
  EXPECT_EQ(f.target.wait_exit(), 7);
}

// Given up on after the match without release(): the destructor lets the
// held process go on.
TEST(ExecFollower, DestroyedWhileHoldingLetsTheProcessGo) {
  StopSignals stop;
  Target target =
      Target::launch_held("/bin/sh", {"sh", "-c", "exec /bin/sh -c 'exit 4'"}, false, 0, true);
  {
    ExecFollower follower(target.pid(), false);
    target.release();
    int n = 0;
    ASSERT_TRUE(follower.run([&](const ExecMatch&) { return ++n == 2; }, stop));
  }
  EXPECT_EQ(target.wait_exit(), 4);
}
