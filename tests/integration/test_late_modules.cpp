// Code that arrives later (issue 17): a library the target loads with
// dlopen(3) after it started, selected by file name glob or by path before
// it is mapped. The probes are bound to the file; the kernel puts them in
// when the process maps it, and takes them out at dlclose. Exact counts
// over a dlopen, dlclose, dlopen again, on both attach paths, in launch
// and attach mode.
#include <chrono>
#include <fstream>
#include <thread>

#include "tests/integration/fixture.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

constexpr long kFirst = 7;   // calls before the dlclose
constexpr long kSecond = 5;  // calls after the second dlopen

class LateModules : public IntegrationTest, public ::testing::WithParamInterface<const char*> {
 protected:
  std::vector<std::string> attach_option() const { return {std::string("--attach=") + GetParam()}; }

  // The target's and the report's counts agree, N+M, every call returned.
  void expect_plugin_calls(const std::string& trace, const std::string& target_out) {
    EXPECT_EQ(printed_count(target_out, "plugin_fn").value_or(-1), kFirst + kSecond);
    EXPECT_EQ(printed_count(target_out, "reloaded").value_or(-1), 1)
        << "dlclose did not unmap the plugin: the test proves less than it says";
    auto rep = report_json(trace);
    ASSERT_TRUE(rep);
    EXPECT_EQ((*rep)["lost_events"], 0);
    EXPECT_EQ(calls_of(*rep, "plugin_fn"), kFirst + kSecond) << function_names(*rep);
    EXPECT_EQ(function_field(*rep, "plugin_fn", "unfinished"), 0);
  }

  void launch(const std::string& select) {
    std::string out = file("late.data");
    Result r =
        record(out, select,
               {Paths::target_dlopen, std::to_string(kFirst), std::to_string(kSecond), tag_arg()},
               attach_option());
    ASSERT_TRUE(r.exited(0)) << r.describe();
    EXPECT_NE(r.err.find("libtarget_plugin.so is not loaded yet: waiting for it"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(r.err.find("never ran"), std::string::npos) << r.err;
    expect_plugin_calls(out, r.out);
    expect_no_uprobe_events_left();
  }
};

TEST_P(LateModules, LaunchByNameGlob) { launch("libtarget_plugin.so*:plugin_fn"); }

TEST_P(LateModules, LaunchByAbsolutePath) {
  launch(std::string(Paths::target_plugin) + ":plugin_fn");
}

// Attach mode: atrace attaches while the target waits; the target loads
// the plugin only then.
TEST_P(LateModules, AttachBeforeDlopen) {
  const std::string go = file("go");
  Child target({Paths::target_dlopen, std::to_string(kFirst), std::to_string(kSecond),
                "--wait=" + go, tag_arg()});
  ASSERT_TRUE(target.wait_for_line("ready", milliseconds(10000))) << target.out();

  std::string out = file("attach.data");
  std::vector<std::string> argv = {Paths::atrace,
                                   "record",
                                   "-p",
                                   std::to_string(target.pid()),
                                   "--select=libtarget_plugin.so*:plugin_fn",
                                   "-o",
                                   out};
  for (const auto& a : attach_option()) argv.push_back(a);
  Child atrace(argv);
  // The trace file gets its name once the probes are in (output_file.h).
  auto deadline = std::chrono::steady_clock::now() + scaled(milliseconds(20000));
  while (!std::ifstream(out) && atrace.running() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(milliseconds(20));
  ASSERT_TRUE(std::ifstream(out)) << "atrace never started recording\n"
                                  << atrace.wait(milliseconds(1000)).describe();
  std::ofstream(go).put('1');

  Result end = target.wait(milliseconds(30000));
  ASSERT_TRUE(end.exited(0)) << end.describe();
  Result r = atrace.wait(milliseconds(30000));  // ends with its target
  ASSERT_TRUE(r.exited(0)) << r.describe();
  EXPECT_NE(r.err.find("waiting for it"), std::string::npos) << r.err;
  expect_plugin_calls(out, end.out);
  expect_no_uprobe_events_left();
}

INSTANTIATE_TEST_SUITE_P(AttachPaths, LateModules, ::testing::Values("multi", "perf"),
                         [](const auto& p) { return std::string(p.param); });

// --follow-forks: a shell runs the target, whose dlopen happens in a child
// of the traced process; the library is named by path (the shell's own
// search would not find it).
TEST_P(LateModules, FollowForksChildByPath) {
  std::string out = file("forks.data");
  const std::string cmd = std::string(Paths::target_dlopen) + " " + std::to_string(kFirst) + " " +
                          std::to_string(kSecond) + " " + tag_arg() + "; true";
  std::vector<std::string> extra = attach_option();
  extra.push_back("--follow-forks");
  Result r =
      record(out, std::string(Paths::target_plugin) + ":plugin_fn", {"/bin/sh", "-c", cmd}, extra);
  ASSERT_TRUE(r.exited(0)) << r.describe();
  expect_plugin_calls(out, r.out);
  expect_no_uprobe_events_left();
}

// `atrace list` finds a library not loaded yet as `record` does.
TEST(LateModulesList, ListsFunctionsOfALibraryNotLoadedYet) {
  Result r = run({Paths::atrace, "list", Paths::target_dlopen, "libtarget_plugin.so*:plugin_fn"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  EXPECT_NE(r.out.find("plugin_fn"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("libtarget_plugin.so"), std::string::npos) << r.out;
}

class LateModulesBadInput : public IntegrationTest {};

// A library waited for that the program never loads: the recording is
// made (exit status the target's), and its end says so.
TEST_F(LateModulesBadInput, ModuleThatNeverArrives) {
  Result r = record(file("never.data"), std::string(Paths::target_plugin) + ":plugin_fn",
                    {Paths::target_c, "3", tag_arg()});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  EXPECT_NE(r.err.find("waiting for it"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("atrace: libtarget_plugin.so, waited for, never ran"), std::string::npos)
      << r.err;
  expect_no_uprobe_events_left();
}

TEST_F(LateModulesBadInput, PathThatDoesNotExist) {
  Result r = record(file("x.data"), "/nonexistent/libnope.so:f",
                    {Paths::target_dlopen, "1", "1", tag_arg()});
  std::string line = expect_one_error_line(r);
  EXPECT_EQ(r.exit_code, 1);  // docs/selectors.md
  EXPECT_NE(line.find("/nonexistent/libnope.so"), std::string::npos) << line;
  EXPECT_NE(line.find("No such file"), std::string::npos) << line;
  expect_no_uprobe_events_left();
}

TEST_F(LateModulesBadInput, FileThatIsNotElf) {
  const std::string text = file("libtext.so");
  std::ofstream(text) << "not a library\n";
  Result r = record(file("x.data"), text + ":f", {Paths::target_dlopen, "1", "1", tag_arg()});
  std::string line = expect_one_error_line(r);
  EXPECT_EQ(r.exit_code, 1);  // docs/selectors.md
  EXPECT_NE(line.find(text), std::string::npos) << line;
  EXPECT_NE(line.find("not an ELF file"), std::string::npos) << line;
  expect_no_uprobe_events_left();
}

TEST_F(LateModulesBadInput, NameFoundNowhere) {
  Result r = record(file("x.data"), "libno_such_library_xyz.so*:f",
                    {Paths::target_dlopen, "1", "1", tag_arg()});
  std::string line = expect_one_error_line(r);
  EXPECT_EQ(r.exit_code, 1);  // docs/selectors.md
  EXPECT_NE(line.find("libno_such_library_xyz.so*"), std::string::npos) << line;
  EXPECT_NE(line.find("dynamic linker"), std::string::npos) << line;
  expect_no_uprobe_events_left();
}

// A library found on disk, but the function is not in it: the selector's
// usual error, not a wait for nothing.
TEST_F(LateModulesBadInput, FunctionNotInLateLibrary) {
  Result r = record(file("x.data"), "libtarget_plugin.so*:no_such_fn_xyz",
                    {Paths::target_dlopen, "1", "1", tag_arg()});
  std::string line = expect_one_error_line(r);
  EXPECT_EQ(r.exit_code, 1);  // docs/selectors.md
  EXPECT_NE(line.find("no_such_fn_xyz"), std::string::npos) << line;
  expect_no_uprobe_events_left();
}

}  // namespace
}  // namespace atrace::it
