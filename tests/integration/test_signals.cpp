// Stop signals in every phase of `atrace record` (record/stop_signals.h):
// before the target is released one ends the run cleanly (exit 128 + signal,
// no file, the command never started); one inherited as ignored still
// works; while a launched target is waited for after the recording, a
// signal is passed on to it and its status comes back, with the summary.
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "base/whole_file.h"
#include "tests/integration/fixture.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

class Signals : public IntegrationTest {};

// How many of `pid`'s descriptors are the BPF objects named `kind`
// ("anon_inode:bpf-prog", "anon_inode:bpf_link").
int fds_of_kind(pid_t pid, const std::string& kind) {
  int n = 0;
  std::error_code ec;
  for (const auto& e :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
    std::error_code ec2;
    if (std::filesystem::read_symlink(e.path(), ec2).string() == kind) ++n;
  }
  return n;
}

// Whether `pid` has forked the target: a child carrying the test's tag
// (once BPF is loaded: helpers of the start-up, such as the loader listing
// libraries, are gone by then).
bool has_forked_target(pid_t pid, const std::string& tag) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
  for (pid_t child; in >> child;) {
    const std::string line =
        atrace::base::read_whole_file("/proc/" + std::to_string(child) + "/cmdline").value_or("");
    if (line.find(tag) != std::string::npos) return true;
  }
  return false;
}

// Sends `sig` to atrace while its BPF programs are loaded (calibration)
// and it has not forked the target yet: stopped meanwhile, so the moment
// is certain. False when that moment was missed.
bool signal_during_startup(Child& atrace, int sig, const std::string& tag) {
  const auto deadline = std::chrono::steady_clock::now() + scaled(milliseconds(20000));
  while (std::chrono::steady_clock::now() < deadline && atrace.running()) {
    if (fds_of_kind(atrace.pid(), "anon_inode:bpf-prog") > 0) {
      ::kill(atrace.pid(), SIGSTOP);
      bool before_fork = !has_forked_target(atrace.pid(), tag);
      if (before_fork) ::kill(atrace.pid(), sig);
      ::kill(atrace.pid(), SIGCONT);
      return before_fork;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return false;
}

void expect_interrupted_before_start(const Result& r, int sig, const std::string& out) {
  EXPECT_TRUE(r.exited(128 + sig)) << "exit 128 + signal, not killed by it\n" << r.describe();
  std::string line = expect_one_error_line(r);
  EXPECT_NE(line.find("interrupted"), std::string::npos) << line;
  EXPECT_EQ(r.out.find("leaf="), std::string::npos) << "the command must not have run";
  EXPECT_FALSE(std::filesystem::exists(out)) << "nothing recorded: no file";
  expect_no_uprobe_events_left();
}

TEST_F(Signals, DuringStartupEndTheRunCleanly) {
  for (int sig : {SIGINT, SIGTERM}) {
    SCOPED_TRACE(strsignal(sig));
    std::string out = file("start.data");
    Child atrace({Paths::atrace, "record", "-o", out, "--select=leaf", "--", Paths::target_c, "1",
                  tag_arg()});
    ASSERT_TRUE(signal_during_startup(atrace, sig, tag_))
        << atrace.wait(milliseconds(20000)).describe();
    expect_interrupted_before_start(atrace.wait(milliseconds(30000)), sig, out);
  }
}

TEST_F(Signals, InheritedIgnoredSigintStillStops) {
  std::string out = file("ignored.data");
  Child atrace({"/bin/sh", "-c", "trap '' INT; exec \"$0\" \"$@\"", Paths::atrace, "record", "-o",
                out, "--select=leaf", "--", Paths::target_c, "1", tag_arg()});
  ASSERT_TRUE(signal_during_startup(atrace, SIGINT, tag_))
      << atrace.wait(milliseconds(20000)).describe();
  expect_interrupted_before_start(atrace.wait(milliseconds(30000)), SIGINT, out);
}

// The target sees the signal dispositions it would see untraced.
TEST_F(Signals, TargetKeepsAnIgnoredSigint) {
  const std::string script = "trap '' INT; exec \"$0\" \"$@\"";
  Result plain = run({"/bin/sh", "-c", script, "/bin/grep", "SigIgn", "/proc/self/status"});
  ASSERT_TRUE(plain.exited(0)) << plain.describe();
  Result traced = run({"/bin/sh", "-c", script, Paths::atrace, "record", "-o", file("ign.data"),
                       "--", "/bin/grep", "SigIgn", "/proc/self/status"});
  ASSERT_TRUE(traced.exited(0)) << traced.describe();
  EXPECT_EQ(traced.out, plain.out);
}

TEST_F(Signals, SecondSignalGoesToTheTargetWhoseStatusIsPassedOn) {
  std::string out = file("second.data");
  Child atrace({Paths::atrace, "record", "-o", out, "--select=tick", "--", Paths::target_threads,
                "--forever", "60", tag_arg()});
  ASSERT_TRUE(atrace.wait_for_line("ready", milliseconds(20000)))
      << atrace.wait(milliseconds(1000)).describe();
  ::kill(atrace.pid(), SIGINT);   // stops the recording
  ::kill(atrace.pid(), SIGTERM);  // ends the target (it exits 0 on SIGTERM)
  Result r = atrace.wait(milliseconds(30000));
  EXPECT_TRUE(r.exited(0)) << r.describe();
  EXPECT_TRUE(printed_count(r.out, "tick")) << "the target ended on its SIGTERM\n" << r.describe();
  EXPECT_NE(r.err.find("written to"), std::string::npos) << "the summary\n" << r.describe();
  // A finished trace (the recording may have stopped before the first tick).
  Result info = run({Paths::atrace, "info", "-i", out});
  EXPECT_TRUE(info.exited(0)) << info.describe();
  EXPECT_EQ(info.out.find("not recorded"), std::string::npos) << info.out;
}

TEST_F(Signals, AfterDurationEverythingIsDetachedAndASignalReachesTheTarget) {
  std::string out = file("duration.data");
  Child atrace({Paths::atrace, "record", "-o", out, "--select=tick", "--duration=1", "--",
                Paths::target_threads, "--forever", "60", tag_arg()});
  ASSERT_TRUE(atrace.wait_for_line("ready", milliseconds(20000)))
      << atrace.wait(milliseconds(1000)).describe();
  // The recording ends after a second; atrace then waits for the target
  // with no BPF link of its own left.
  const auto deadline = std::chrono::steady_clock::now() + scaled(milliseconds(20000));
  bool detached = false;
  std::this_thread::sleep_for(milliseconds(1000));
  while (!detached && std::chrono::steady_clock::now() < deadline && atrace.running()) {
    detached = fds_of_kind(atrace.pid(), "anon_inode:bpf_link") == 0 &&
               fds_of_kind(atrace.pid(), "anon_inode:bpf-prog") == 0;
    std::this_thread::sleep_for(milliseconds(20));
  }
  EXPECT_TRUE(detached) << "BPF objects still held while waiting for the target";
  ::kill(atrace.pid(), SIGTERM);
  Result r = atrace.wait(milliseconds(30000));
  EXPECT_TRUE(r.exited(0)) << r.describe();
  EXPECT_TRUE(printed_count(r.out, "tick")) << r.describe();
  EXPECT_NE(r.err.find("written to"), std::string::npos) << r.describe();
}

}  // namespace
}  // namespace atrace::it
