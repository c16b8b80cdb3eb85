#include "tests/integration/fixture.h"

#include <signal.h>

#include <filesystem>
#include <thread>

namespace atrace::it {

void IntegrationTest::SetUp() {
  std::string why = tracing_unavailable_reason();
  if (!why.empty()) {
    if (in_ci()) FAIL() << "CI=true and this integration test cannot run: " << why;
    GTEST_SKIP() << why;
  }
  // A missing binary is a build problem, not a machine without BPF.
  for (const char* bin : {Paths::atrace, Paths::demo, Paths::target_c, Paths::target_cpp,
                          Paths::target_threads, Paths::target_lib})
    ASSERT_TRUE(std::filesystem::exists(bin)) << bin << " was not built";
  tmp_ = std::make_unique<TempDir>();
  tag_ = unique_tag();
}

void IntegrationTest::TearDown() {
  if (!tag_.empty()) {
    // A target still running after its test is a hung or leaked target;
    // give a just-ended one a moment to be reaped by init first.
    std::vector<pid_t> left;
    for (int i = 0; i < 20; ++i) {
      left = pids_with_arg(tag_arg() + std::string(1, '\0'));  // NUL: exact arg
      if (left.empty()) break;
      std::this_thread::sleep_for(milliseconds(100));
    }
    if (!left.empty()) {
      kill_pids_with_arg(tag_arg() + std::string(1, '\0'));
      ADD_FAILURE() << left.size() << " target process(es) still running after the test (pid "
                    << left.front() << ", state " << process_state(left.front()).value_or('?')
                    << ")";
    }
  }
  // A failed test's files are kept only on request (ATRACE_KEEP_TMP=1):
  // a test run must leave $TMPDIR as it found it, failed or not.
  if (tmp_ && HasFailure() && keep_requested()) {
    tmp_->keep();
    std::printf("[ kept    ] %s\n", tmp_->path().c_str());
  }
}

Result IntegrationTest::record(const std::string& out_file, const std::string& select,
                               const std::vector<std::string>& cmd,
                               const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {Paths::atrace, "record", "-o", out_file};
  if (!select.empty()) argv.push_back("--select=" + select);  // none: kernel events only
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.push_back("--");
  argv.insert(argv.end(), cmd.begin(), cmd.end());
  return run(argv);
}

std::string expect_one_error_line(const Result& r) {
  EXPECT_FALSE(r.timed_out) << "atrace hung\n" << r.describe();
  EXPECT_EQ(r.term_signal, 0) << "atrace crashed\n" << r.describe();
  EXPECT_GT(r.exit_code, 0) << "bad input must give a non-zero exit\n" << r.describe();
  std::string err = r.err;
  while (!err.empty() && err.back() == '\n') err.pop_back();
  EXPECT_EQ(err.find('\n'), std::string::npos) << "bad input must give exactly one line on stderr\n"
                                               << r.describe();
  EXPECT_EQ(err.rfind("atrace: ", 0), 0u) << "the error line must start with \"atrace: \"\n"
                                          << r.describe();
  return err;
}

void expect_no_uprobe_events_left() {
  auto left = leftover_uprobe_events();
  if (!left) return;  // no tracefs mounted: nothing to look at
  EXPECT_TRUE(left->empty()) << "uprobes left in uprobe_events, first: " << left->front();
}

ForeverTarget::ForeverTarget(const std::string& tag, int seconds)
    : child_({Paths::target_threads, "--forever",
              std::to_string(scaled(milliseconds(seconds * 1000)).count() / 1000),
              "--tag=" + tag}) {
  if (!child_.wait_for_line("ready", milliseconds(10000))) return;
  auto addr = printed_value(child_.out(), "tick_addr");
  if (!addr) return;
  tick_addr_ = std::stoull(*addr, nullptr, 16);
  auto code = read_process_memory(pid(), tick_addr_, 16);
  if (!code) return;
  original_ = *code;
  ok_ = true;
}

std::vector<std::uint8_t> ForeverTarget::code_now() const {
  return read_process_memory(pid(), tick_addr_, original_.size())
      .value_or(std::vector<std::uint8_t>{});
}

bool ForeverTarget::wait_until_probed(milliseconds timeout, Child& tracer) const {
  auto deadline = std::chrono::steady_clock::now() + scaled(timeout);
  while (std::chrono::steady_clock::now() < deadline && tracer.running()) {
    auto now = code_now();
    if (!now.empty() && now != original_) return true;
    std::this_thread::sleep_for(milliseconds(10));
  }
  return false;
}

Result ForeverTarget::stop() {
  child_.signal(SIGTERM);
  return child_.wait(milliseconds(10000));
}

}  // namespace atrace::it
