// Code that arrives later (issue 17): a library the target loads with
// dlopen(3) after it started, selected by file name glob or by path before
// it is mapped. The probes are bound to the file; the kernel puts them in
// when the process maps it, and takes them out at dlclose. Exact counts
// over a dlopen, dlclose, dlopen again, on both attach paths, in launch
// and attach mode.
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/integration/fixture.h"
#include "tests/integration/report.h"
#include "uprobes/build_id.h"

namespace atrace::it {
namespace {

constexpr long kFirst = 7;   // calls before the dlclose
constexpr long kSecond = 5;  // calls after the second dlopen

class LateModulesMapped : public IntegrationTest {};

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

// `script`'s MODULE lines of `path` in a trace: "module: PATH base=0x.. build_id=..".
struct ModuleLines {
  std::vector<std::string> loads, unloads;
};
ModuleLines module_lines(const std::string& trace, const std::string& path) {
  Result s = run({Paths::atrace, "script", "-i", trace, "--fields=pid,kind,details"});
  EXPECT_TRUE(s.exited(0)) << s.describe();
  ModuleLines m;
  std::istringstream in(s.out);
  for (std::string line; std::getline(in, line);) {
    if (line.find(" " + path + " base=0x") == std::string::npos) continue;
    if (line.find("module-unload:") != std::string::npos) m.unloads.push_back(line);
    else if (line.find("module:") != std::string::npos) m.loads.push_back(line);
  }
  return m;
}

TEST_P(LateModules, LaunchByNameGlob) { launch("libtarget_plugin.so*:plugin_fn"); }

// dlopen, N calls, dlclose, dlopen, M calls: N+M calls, and the module's
// two loads and two unloads in the trace, with its path, base and build id,
// each load before the calls it made possible.
TEST_P(LateModules, ModuleEventsAtEachDlopenAndDlclose) {
  std::string out = file("events.data");
  Result r =
      record(out, "libtarget_plugin.so*:plugin_fn",
             {Paths::target_dlopen, std::to_string(kFirst), std::to_string(kSecond), tag_arg()},
             attach_option());
  ASSERT_TRUE(r.exited(0)) << r.describe();
  expect_plugin_calls(out, r.out);
  const ModuleLines m = module_lines(out, Paths::target_plugin);
  ASSERT_EQ(m.loads.size(), 2u) << r.describe();
  ASSERT_EQ(m.unloads.size(), 2u);
  const std::string build_id = uprobes::read_build_id(Paths::target_plugin);
  ASSERT_FALSE(build_id.empty());
  for (const auto& line : m.loads) EXPECT_NE(line.find("build_id=" + build_id), std::string::npos);
  // Order: load, calls, unload, load, calls, unload.
  Result s = run({Paths::atrace, "script", "-i", out, "--fields=kind,details"});
  std::string order;
  std::istringstream in(s.out);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("module-unload:", 0) == 0) order += 'U';
    else if (line.rfind("module:", 0) == 0) order += 'L';
    else if (line.rfind("entry:", 0) == 0 && line.find("plugin_fn") != std::string::npos)
      order += 'c';
  }
  EXPECT_EQ(order, "L" + std::string(kFirst, 'c') + "UL" + std::string(kSecond, 'c') + "U");
  expect_no_uprobe_events_left();
}

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
  const ModuleLines m = module_lines(out, Paths::target_plugin);
  EXPECT_EQ(m.loads.size(), 2u);
  EXPECT_EQ(m.unloads.size(), 2u);
  expect_no_uprobe_events_left();
}

// Attach mode: a module mapped before atrace attached is in the trace at
// its start (its load happened before).
TEST_F(LateModulesMapped, MappedAtAttach) {
  const std::string go = file("go");
  Child target({Paths::target_dlopen, "2", "3", "--wait=" + go, tag_arg()});
  ASSERT_TRUE(target.wait_for_line("ready", milliseconds(10000))) << target.out();
  std::string out = file("mapped.data");
  Child atrace({Paths::atrace, "record", "-p", std::to_string(target.pid()),
                "--select=libc.so.6:dlopen,libtarget_plugin.so*:plugin_fn", "-o", out});
  auto deadline = std::chrono::steady_clock::now() + scaled(milliseconds(20000));
  while (!std::ifstream(out) && atrace.running() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(milliseconds(20));
  ASSERT_TRUE(std::ifstream(out)) << atrace.wait(milliseconds(1000)).describe();
  std::ofstream(go).put('1');
  ASSERT_TRUE(target.wait(milliseconds(30000)).exited(0));
  Result r = atrace.wait(milliseconds(30000));
  ASSERT_TRUE(r.exited(0)) << r.describe();
  // libc: mapped before the attach, one load at the start; the plugin: its
  // two loads while recording.
  Result s = run({Paths::atrace, "script", "-i", out, "--fields=kind,details"});
  size_t libc = 0;
  std::istringstream in(s.out);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("module:", 0) == 0 && line.find("/libc.so.6 base=0x") != std::string::npos)
      ++libc;
  EXPECT_EQ(libc, 1u) << s.out;
  EXPECT_EQ(module_lines(out, Paths::target_plugin).loads.size(), 2u) << s.out;
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

// The relevance filters and exclude selectors work for a late module as for
// an early one: the whole plugin selected but one function excluded, and
// --filter-max-calls detaches plugin_fn at its count (one thread: at most
// one call in flight past it), in the waiting module.
TEST_F(LateModulesMapped, FiltersAndExcludesApplyToALateModule) {
  constexpr long kMax = 4;
  const std::string out = file("filters.data");
  Result r =
      record(out, "libtarget_plugin.so*:*",
             {Paths::target_dlopen, std::to_string(kFirst), std::to_string(kSecond), tag_arg()},
             {"--exclude=libtarget_plugin.so*:plugin_calls_so_far", "--filter=absolute",
              "--filter-max-calls=" + std::to_string(kMax), "--no-kernel"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  EXPECT_NE(r.err.find("waiting for it (1 probe on"), std::string::npos)
      << "the exclude did not apply to the late module\n"
      << r.err;
  auto rep = report_json(out);
  ASSERT_TRUE(rep);
  EXPECT_GE(calls_of(*rep, "plugin_fn"), kMax) << function_names(*rep);
  EXPECT_LE(calls_of(*rep, "plugin_fn"), kMax + 1) << function_names(*rep);
  bool detached = false;
  for (const auto& d : (*rep)["detached"])
    detached |= d["name"].get<std::string>().find("plugin_fn") != std::string::npos &&
                d["rule"] == "max-calls";
  EXPECT_TRUE(detached) << (*rep)["detached"].dump();
  expect_no_uprobe_events_left();
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

// Debian's perl has its interpreter in its own executable, while
// libperl.so.5.36 sits on disk: a selector naming the library waits for a
// file perl never loads. The note says perl has the functions itself and
// which selector probes them there; that selector counts exactly (issue 31).
TEST_F(LateModulesBadInput, ALibraryTheProgramHasItselfIsNamed) {
  const char* perl = "/usr/bin/perl";
  const std::string script = "print \"a\" for 1..5; print \"\\n\"";
  Result r =
      record(file("lib.data"), "libperl.so*:Perl_pp_print", {perl, "-e", script, "--", tag_arg()});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  EXPECT_NE(r.err.find("atrace: note: perl itself has 1 function matching 'Perl_pp_print' "
                       "(Perl_pp_print): if it never loads libperl.so.5.36, "
                       "--select='perl:Perl_pp_print' probes its own"),
            std::string::npos)
      << r.err;
  const std::string out = file("own.data");
  Result own =
      record(out, "perl:Perl_pp_print", {perl, "-e", script, "--", tag_arg()}, {"--filter=off"});
  ASSERT_TRUE(own.exited(0)) << own.describe();
  auto rep = report_json(out);
  ASSERT_TRUE(rep);
  EXPECT_EQ(calls_of(*rep, "Perl_pp_print"), 6);  // five "a" and the newline
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

// pyenv's case (issue 31): the library a selector names is found where
// atrace looks (its LD_LIBRARY_PATH), but the command's wrapper sets
// another, and the program maps a copy from there. The probes wait on the
// file nobody loads: the end names the copy the process mapped and the
// selector that probes it, and the last line says 0 calls.
TEST_F(LateModulesBadInput, ACopyMappedInsteadIsNamed) {
  const std::string lib = Paths::target_shared;
  const std::string dir = lib.substr(0, lib.rfind('/'));
  const std::string copies = file("copies");
  std::filesystem::create_directories(copies);
  std::filesystem::copy_file(lib, copies + "/libtarget_shared.so");
  const std::string wrapper = file("wrapper");
  std::ofstream(wrapper) << "#!/bin/sh\nLD_LIBRARY_PATH=" << copies << " exec "
                         << Paths::target_lib_norunpath << " \"$@\"\n";
  chmod(wrapper.c_str(), 0755);
  const std::string out = file("copy.data");
  // Long enough for the process to outlive the moment its mappings are
  // read (a process gone within a millisecond of loading leaves the
  // general line); the calls go to the copy, which has no probe.
  Result r = run({"env", "LD_LIBRARY_PATH=" + dir, Paths::atrace, "record", "-o", out,
                  "--select=libtarget_shared.so:shared_fn", "--", wrapper, "20000000", tag_arg()});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  EXPECT_EQ(printed_count(r.out, "shared_fn").value_or(-1), 20000000) << r.out;
  EXPECT_NE(r.err.find("atrace: libtarget_shared.so, waited for, never ran: process "),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(" mapped " + copies + "/libtarget_shared.so instead: --select='" + copies +
                       "/libtarget_shared.so:shared_fn' probes that file"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("written to " + out + ": 0 calls, the probe never fired\n"),
            std::string::npos)
      << r.err;
  auto rep = report_json(out);
  ASSERT_TRUE(rep);
  EXPECT_LE(calls_of(*rep, "shared_fn"), 0);  // absent (-1) or 0: never called
  expect_no_uprobe_events_left();

  // The selector the note gives counts every call.
  const std::string out2 = file("copy2.data");
  Result r2 = run({"env", "LD_LIBRARY_PATH=" + dir, Paths::atrace, "record", "-o", out2,
                   "--filter=off", "--select=" + copies + "/libtarget_shared.so:shared_fn", "--",
                   wrapper, "300", tag_arg()});
  ASSERT_TRUE(r2.exited(0)) << r2.describe();
  auto rep2 = report_json(out2);
  ASSERT_TRUE(rep2);
  EXPECT_EQ(calls_of(*rep2, "shared_fn"), 300) << r2.err;
  expect_no_uprobe_events_left();
}

}  // namespace
}  // namespace atrace::it
