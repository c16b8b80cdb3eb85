// The base fixture of every integration test, plus the long-running target
// the attach tests trace.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tests/integration/env.h"
#include "tests/integration/run.h"

namespace atrace::it {

// SetUp skips the test when real tracing is impossible here (not root, no
// BPF) — or fails it when CI=true, since in CI an integration test that
// cannot run must not pass silently. Each test gets a temp dir (kept when
// the test failed) and a tag for the targets it starts; TearDown kills any
// tagged process still alive and fails the test if one was.
class IntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // A path in this test's temp dir.
  std::string file(const std::string& name) const { return tmp_->file(name); }
  // "--tag=<unique>", to append to a target's arguments.
  std::string tag_arg() const { return "--tag=" + tag_; }

  // atrace record -o FILE --select=SELECT [extra...] -- CMD... (no --select
  // when SELECT is empty)
  Result record(const std::string& out_file, const std::string& select,
                const std::vector<std::string>& cmd, const std::vector<std::string>& extra = {});

  std::unique_ptr<TempDir> tmp_;
  std::string tag_;
};

// Checks the bad-input contract on a finished atrace run: a non-zero exit
// (not a crash or a timeout) and exactly one line on stderr starting
// "atrace: ". Returns that line ("" after a failure).
std::string expect_one_error_line(const Result& r);

// No uprobe of ours left in tracefs (checked only where tracefs is mounted).
void expect_no_uprobe_events_left();

// target_threads --forever, started and ready: knows its pid and where the
// code of tick() is, so a test can watch a uprobe appear there (atrace
// attached) and go away (atrace detached, the code as before).
class ForeverTarget {
 public:
  // Starts it; `ok()` says whether it came up. Stops on its own after
  // `seconds` whatever happens.
  ForeverTarget(const std::string& tag, int seconds = 60);

  bool ok() const { return ok_; }
  pid_t pid() const { return child_.pid(); }
  std::uint64_t tick_addr() const { return tick_addr_; }
  // The first bytes of tick() as they were before any tracing.
  const std::vector<std::uint8_t>& original_code() const { return original_; }
  // The same bytes now.
  std::vector<std::uint8_t> code_now() const;
  // Waits until tick()'s code differs from the original (a uprobe was
  // written there); false after the timeout or when `tracer` ended first.
  bool wait_until_probed(milliseconds timeout, Child& tracer) const;
  bool alive() { return child_.running(); }

  // SIGTERM, then waits; the target prints "tick=N" and exits 0.
  Result stop();

  std::string startup_output() const { return child_.out(); }

 private:
  mutable Child child_;
  bool ok_ = false;
  std::uint64_t tick_addr_ = 0;
  std::vector<std::uint8_t> original_;
};

}  // namespace atrace::it
