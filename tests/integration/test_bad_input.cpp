// Bad input: each case gives one line on stderr starting "atrace: " that
// names what was wrong, a non-zero exit, no probes left behind, and no target
// left hanging (the fixture's TearDown fails a test whose tagged target is
// still running).
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <random>

#include "tests/integration/fixture.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

class BadInput : public IntegrationTest {};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

TEST_F(BadInput, PidThatDoesNotExist) {
  Result r =
      run({Paths::atrace, "record", "-o", file("x.data"), "--select=tick", "-p", "999999999"});
  std::string line = expect_one_error_line(r);
  EXPECT_NE(line.find("999999999"), std::string::npos) << "name the pid: " << line;
  expect_no_uprobe_events_left();
}

TEST_F(BadInput, SelectorMatchingNothingInLaunchMode) {
  Result r = record(file("x.data"), "no_such_function_xyz", {Paths::target_c, "1", tag_arg()});
  std::string line = expect_one_error_line(r);
  EXPECT_NE(line.find("no_such_function_xyz"), std::string::npos) << "name the selector: " << line;
  expect_no_uprobe_events_left();
  // TearDown checks the held target did not stay behind.
}

TEST_F(BadInput, SelectorMatchingNothingLeavesRunningTargetAlone) {
  ForeverTarget target(tag_);
  ASSERT_TRUE(target.ok()) << target.startup_output();
  Result r = run({Paths::atrace, "record", "-o", file("x.data"), "--select=no_such_function_xyz",
                  "-p", std::to_string(target.pid())});
  std::string line = expect_one_error_line(r);
  EXPECT_NE(line.find("no_such_function_xyz"), std::string::npos) << "name the selector: " << line;
  expect_no_uprobe_events_left();
  EXPECT_EQ(target.code_now(), target.original_code());
  ASSERT_TRUE(target.alive());
  auto state = process_state(target.pid());
  EXPECT_TRUE(state && (*state == 'R' || *state == 'S')) << "target state " << state.value_or('?');
  Result end = target.stop();
  EXPECT_TRUE(end.exited(0)) << end.describe();
  EXPECT_TRUE(printed_count(end.out, "tick")) << end.describe();
}

TEST_F(BadInput, CommandThatDoesNotExist) {
  Result r = record(file("x.data"), "main", {"/nonexistent/cmd", tag_arg()});
  std::string line = expect_one_error_line(r);
  EXPECT_NE(line.find("/nonexistent/cmd"), std::string::npos) << "name the command: " << line;
  expect_no_uprobe_events_left();
}

TEST_F(BadInput, FileThatIsNotATrace) {
  std::string path = file("random.txt");
  {
    std::ofstream text(path);
    std::mt19937 rng(42);
    for (int line = 0; line < 200; ++line) {
      for (int i = 0; i < 60; ++i) text << static_cast<char>('a' + rng() % 26);
      text << '\n';
    }
  }
  for (const char* cmd : {"report", "info"}) {
    SCOPED_TRACE(cmd);
    Result r = run({Paths::atrace, cmd, "-i", path});
    std::string line = expect_one_error_line(r);
    EXPECT_NE(line.find("random.txt"), std::string::npos) << "name the file: " << line;
  }
  Result json = run({Paths::atrace, "report", "-i", path, "--format=json"});
  expect_one_error_line(json);
  EXPECT_TRUE(json.out.empty()) << "no partial JSON on stdout: " << json.out;
}

TEST_F(BadInput, TraceFileThatDoesNotExist) {
  Result r = run({Paths::atrace, "report", "-i", file("missing.data")});
  std::string line = expect_one_error_line(r);
  EXPECT_NE(line.find("missing.data"), std::string::npos) << "name the file: " << line;
}

TEST_F(BadInput, NotRoot) {
  // A directory nobody may write to, so the only thing missing is privilege.
  std::string dir = file("open");
  ASSERT_EQ(::mkdir(dir.c_str(), 0777), 0);
  ASSERT_EQ(::chmod(dir.c_str(), 0777), 0);
  ASSERT_EQ(::chmod(tmp_->path().c_str(), 0755), 0);
  Result r = run({"setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", Paths::atrace,
                  "record", "-o", dir + "/x.data", "--select=leaf", "--", Paths::target_c, "1",
                  tag_arg()});
  std::string line = lower(expect_one_error_line(r));
  EXPECT_TRUE(line.find("root") != std::string::npos ||
              line.find("permission") != std::string::npos ||
              line.find("privilege") != std::string::npos)
      << "say that root/privileges are needed: " << line;
  EXPECT_EQ(printed_count(r.out, "leaf"), std::nullopt) << "the target must not run untraced";
  expect_no_uprobe_events_left();
}

}  // namespace
}  // namespace atrace::it
