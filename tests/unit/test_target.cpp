// Target: a launched child is held until released, passes its exit status
// on, and never runs if atrace gives up before releasing it.
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "record/target.h"
#include "temp_file.h"

using atrace::Target;
using atrace::TargetError;

namespace {
bool exists(const std::string& p) { return access(p.c_str(), F_OK) == 0; }
}  // namespace

TEST(Target, HeldChildDoesNotRunUntilReleased) {
  atrace::testing::TempFile tmp("ran");
  const std::string& marker = tmp.path();
  Target t = Target::launch_held("/bin/sh", {"sh", "-c", "touch " + marker + "; exit 3"});
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(exists(marker)) << "the child ran before release";
  EXPECT_FALSE(t.exited());
  t.release();
  EXPECT_EQ(t.wait_exit(), 3);
  EXPECT_TRUE(exists(marker));
}

TEST(Target, NeverReleasedChildExitsWithoutRunning) {
  atrace::testing::TempFile tmp("never");
  const std::string& marker = tmp.path();
  pid_t pid;
  {
    Target t = Target::launch_held("/bin/sh", {"sh", "-c", "touch " + marker});
    pid = t.pid();
  }  // destroyed unreleased: reaped, never exec'd
  EXPECT_FALSE(exists(marker));
  EXPECT_NE(kill(pid, 0), 0);
}

TEST(Target, FailedExecIsReported) {
  Target t = Target::launch_held("/nonexistent/prog", {"prog"});
  EXPECT_THROW(t.release(), TargetError);
}

TEST(Target, SignalDeathMapsTo128PlusSignal) {
  Target t = Target::launch_held("/bin/sh", {"sh", "-c", "kill -TERM $$"});
  t.release();
  EXPECT_EQ(t.wait_exit(), 128 + 15);
}

TEST(Target, AttachToMissingPidFails) { EXPECT_THROW(Target::attach(999999999), TargetError); }

TEST(Target, AttachWatchesExit) {
  Target child = Target::launch_held("/bin/sleep", {"sleep", "0.2"});
  child.release();
  Target watched = Target::attach(child.pid());
  EXPECT_NE(watched.command_line().find("sleep 0.2"), std::string::npos);
  struct pollfd p = {watched.pidfd(), POLLIN, 0};
  ASSERT_EQ(poll(&p, 1, 5000), 1);
  EXPECT_EQ(child.wait_exit(), 0);
}

TEST(Target, StdoutCanBeKeptOffStdout) {
  // The child's stdout goes where our stderr goes: here, a file.
  atrace::testing::TempFile tmp("stderr");
  const std::string& err_path = tmp.path();
  FILE* saved = fdopen(dup(STDERR_FILENO), "w");
  ASSERT_NE(freopen(err_path.c_str(), "w", stderr), nullptr);
  {
    Target t = Target::launch_held("/bin/echo", {"echo", "program-output"}, true);
    t.release();
    EXPECT_EQ(t.wait_exit(), 0);
  }
  fflush(stderr);
  dup2(fileno(saved), STDERR_FILENO);
  fclose(saved);
  std::ifstream in(err_path);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "program-output");
}
