// Processes in roots of their own (issue 30), on the real kernel: target_cont
// runs in a private mount and pid namespace whose root is a tmpfs only it
// sees (private_root.h), linked to /opt/app/libcont.so, a file that exists
// only there. `atrace record -p HOSTPID` must read and probe the files the
// process sees: exact call counts, its USDT probes, a library it loads
// later by name (found by the root's own ld.so.cache or the process's
// LD_LIBRARY_PATH), parameters from its debug information; two roots with
// different builds of libcont.so at the same path each get their own
// probes, two sharing one file count each their own calls; bpftrace,
// attached through /proc/PID/root, counts the same. What atrace says and
// writes names the files as the process does, never /proc/PID/root/...
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/integration/fixture.h"
#include "tests/integration/private_root.h"
#include "tests/integration/report.h"
#include "uprobes/build_id.h"
#include "uprobes/proc_maps.h"
#include "uprobes/process_root.h"

namespace atrace::it {
namespace {

constexpr const char* kTargetCont = TARGET_CONT_BIN;
constexpr const char* kContA = CONT_A_LIB;
constexpr const char* kContB = CONT_B_LIB;
constexpr const char* kContPlug = CONT_PLUG_LIB;

constexpr const char* kLib = "/opt/app/libcont.so";
constexpr const char* kPlug = "/opt/plugins/libcontplug.so";
constexpr long kSteps = 37;  // cont_step calls (cont_work makes them)
constexpr long kAdds = 3;    // cont_add calls, always
constexpr long kPlugs = 11;  // plug_fn calls, after the dlopen

// The "kind: details" lines of `atrace script` for a trace.
std::vector<std::string> script_lines(const std::string& trace) {
  Result s = run({Paths::atrace, "script", "-i", trace, "--fields=kind,details"});
  EXPECT_TRUE(s.exited(0)) << s.describe();
  std::vector<std::string> out;
  std::istringstream in(s.out);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

class Containers : public IntegrationTest {
 protected:
  void SetUp() override {
    IntegrationTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    for (const char* f : {kTargetCont, kContA, kContB, kContPlug})
      ASSERT_TRUE(std::filesystem::exists(f)) << f << " was not built";
  }

  // target_cont waiting for its trigger in a root of its own, with `lib`
  // (a build of libcont.so) copied to /opt/app/libcont.so and the plugin in
  // /opt/plugins, which the root's ld.so.cache lists.
  PrivateRootSpec spec(const std::string& lib) const {
    PrivateRootSpec s;
    s.program = kTargetCont;
    s.inside = "/opt/app/target_cont";
    s.args = {std::to_string(kSteps), std::to_string(kPlugs), "--wait", tag_arg()};
    s.copies = {{lib, kLib}, {kContPlug, kPlug}};
    s.ld_conf_dirs = {"/opt/plugins"};
    return s;
  }

  std::unique_ptr<PrivateRoot> start(const PrivateRootSpec& s, const std::string& name) {
    return std::make_unique<PrivateRoot>(file(name), s);
  }

  // `atrace record -p PID -o OUT EXTRA...`, started and attached: its trace
  // file gets its name once the probes are in (output_file.h).
  std::unique_ptr<Child> attach(pid_t pid, const std::string& out,
                                const std::vector<std::string>& extra) {
    // --filter=off: exact counts, however short and frequent the calls.
    std::vector<std::string> argv = {Paths::atrace, "record", "-p",          std::to_string(pid),
                                     "-o",          out,      "--no-kernel", "--filter=off"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto atrace = std::make_unique<Child>(argv);
    const auto deadline = std::chrono::steady_clock::now() + scaled(milliseconds(30000));
    while (!std::filesystem::exists(out) && atrace->running() &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(milliseconds(20));
    return atrace;
  }

  // Attaches atrace to the root's program with `extra`, lets the program
  // run, and waits for both: atrace's result; the program's in `target`.
  Result record_in(PrivateRoot& root, const std::string& out, const std::vector<std::string>& extra,
                   Result* target) {
    auto atrace = attach(root.host_pid(), out, extra);
    EXPECT_TRUE(std::filesystem::exists(out)) << "atrace never started recording\n"
                                              << atrace->wait(milliseconds(1000)).describe();
    ::kill(root.host_pid(), SIGUSR1);
    *target = root.wait(milliseconds(30000));
    return atrace->wait(milliseconds(30000));  // ends with its target
  }

  // What atrace said and wrote names the process's files as it does.
  void expect_seen_paths(const Result& r, const std::string& trace) {
    EXPECT_EQ(r.err.find("/proc/"), std::string::npos) << r.err;
    const std::string lines = joined(script_lines(trace));
    EXPECT_EQ(lines.find("/proc/"), std::string::npos) << lines;
    Result info = run({Paths::atrace, "info", "-i", trace});
    EXPECT_TRUE(info.exited(0)) << info.describe();
    EXPECT_EQ(info.out.find("/proc/"), std::string::npos) << info.out;
    Result chrome = run({Paths::atrace, "convert", "-i", trace, "--to=chrome", "-o", "-"});
    EXPECT_TRUE(chrome.exited(0)) << chrome.describe();
    EXPECT_EQ(chrome.out.find("/proc/"), std::string::npos);
  }
};

// libcont.so:* by name: every function of the root's library, exact counts,
// and the library's load in the trace with the process's path and the
// build id of the file it runs.
TEST_F(Containers, ExactCountsInALibraryOnlyTheRootHas) {
  ASSERT_FALSE(std::filesystem::exists(kLib)) << "the host must not have " << kLib;
  auto root = start(spec(kContA), "root");
  ASSERT_EQ(root->error(), "");
  EXPECT_EQ(root->ns_pid(), 1);
  const std::string out = file("cont.data");
  Result target;
  Result r = record_in(*root, out, {"--select=libcont.so:*"}, &target);
  ASSERT_TRUE(r.exited(0)) << r.describe();
  ASSERT_TRUE(target.exited(0)) << target.describe();
  EXPECT_EQ(printed_value(target.out, "variant").value_or("?"), "A");
  EXPECT_EQ(printed_count(target.out, "cont_step").value_or(-1), kSteps);
  auto rep = report_json(out);
  ASSERT_TRUE(rep);
  EXPECT_EQ((*rep)["lost_events"], 0);
  EXPECT_EQ(calls_of(*rep, "cont_work"), 1) << function_names(*rep);
  EXPECT_EQ(calls_of(*rep, "cont_step"), kSteps) << function_names(*rep);
  EXPECT_EQ(calls_of(*rep, "cont_add"), kAdds) << function_names(*rep);
  EXPECT_EQ(function_field(*rep, "cont_step", "unfinished"), 0);
  EXPECT_EQ(find_function(*rep, "cont_only_b"), nullptr) << function_names(*rep);
  // The module, as the process sees it, with its build's id.
  const std::string build_id = uprobes::read_build_id(kContA);
  ASSERT_FALSE(build_id.empty());
  bool loaded = false;
  for (const auto& l : script_lines(out))
    if (l.rfind("module:", 0) == 0 &&
        l.find(std::string(" ") + kLib + " base=0x") != std::string::npos) {
      loaded = true;
      EXPECT_NE(l.find("build_id=" + build_id), std::string::npos) << l;
    }
  EXPECT_TRUE(loaded) << joined(script_lines(out));
  expect_seen_paths(r, out);
  expect_no_uprobe_events_left();
}

// The host has another build of the library at the very path the kernel
// shows atrace for the process's file (under the directory the root's
// tmpfs hides in the process's namespace): atrace must probe the file the
// process maps, build B, not the host's build A.
TEST_F(Containers, NotTheHostsFileAtTheSamePath) {
  const std::string mountpoint = file("root");
  std::filesystem::create_directories(mountpoint + "/opt/app");
  std::filesystem::copy_file(kContA, mountpoint + kLib);
  auto root = start(spec(kContB), "root");
  ASSERT_EQ(root->error(), "");
  ASSERT_TRUE(std::filesystem::exists(mountpoint + kLib)) << "the host's copy must stay there";
  const std::string out = file("b.data");
  Result target;
  Result r = record_in(*root, out, {"--select=libcont.so:cont_*"}, &target);
  ASSERT_TRUE(r.exited(0)) << r.describe();
  ASSERT_TRUE(target.exited(0)) << target.describe();
  EXPECT_EQ(printed_value(target.out, "variant").value_or("?"), "B");
  auto rep = report_json(out);
  ASSERT_TRUE(rep);
  EXPECT_EQ(calls_of(*rep, "cont_only_b"), kSteps) << function_names(*rep);
  EXPECT_EQ(calls_of(*rep, "cont_step"), kSteps) << function_names(*rep);
  EXPECT_EQ(calls_of(*rep, "cont_add"), kAdds) << function_names(*rep);
  const std::string lines = joined(script_lines(out));
  EXPECT_NE(lines.find("build_id=" + uprobes::read_build_id(kContB)), std::string::npos) << lines;
  expect_seen_paths(r, out);
}

// `atrace list -p` reads the root's own build too: B's extra function is
// listed for the process that runs B, and its USDT probe.
TEST_F(Containers, ListShowsTheFunctionsOfTheRootsBuild) {
  auto a = start(spec(kContA), "root-a");
  auto b = start(spec(kContB), "root-b");
  ASSERT_EQ(a->error(), "");
  ASSERT_EQ(b->error(), "");
  Result la = run({Paths::atrace, "list", "-p", std::to_string(a->host_pid()), "libcont.so:*"});
  Result lb = run({Paths::atrace, "list", "-p", std::to_string(b->host_pid()), "libcont.so:*"});
  ASSERT_TRUE(la.exited(0)) << la.describe();
  ASSERT_TRUE(lb.exited(0)) << lb.describe();
  EXPECT_NE(la.out.find("cont_step"), std::string::npos) << la.out;
  EXPECT_EQ(la.out.find("cont_only_b"), std::string::npos) << la.out;
  EXPECT_NE(lb.out.find("cont_only_b"), std::string::npos) << lb.out;
  Result usdt = run({Paths::atrace, "list", "-p", std::to_string(b->host_pid()), "--usdt"});
  ASSERT_TRUE(usdt.exited(0)) << usdt.describe();
  EXPECT_NE(usdt.out.find("cont:step"), std::string::npos) << usdt.out;
  for (const Result* r : {&la, &lb, &usdt})
    EXPECT_EQ((r->out + r->err).find("/proc/"), std::string::npos) << r->describe();
}

// The library's USDT probe (with a semaphore, which atrace sets in the
// process's memory): one hit per cont_step, with its index.
TEST_F(Containers, UsdtProbesOfTheRootsLibrary) {
  auto root = start(spec(kContA), "root");
  ASSERT_EQ(root->error(), "");
  const std::string out = file("usdt.data");
  Result target;
  Result r = record_in(*root, out, {"--usdt=libcont.so:cont:*"}, &target);
  ASSERT_TRUE(r.exited(0)) << r.describe();
  ASSERT_TRUE(target.exited(0)) << target.describe();
  std::vector<long> args;
  for (const auto& l : script_lines(out)) {
    std::istringstream in(l);
    std::string kind, probe;
    in >> kind >> probe;
    if (kind != "usdt:") continue;
    EXPECT_EQ(probe, "cont:step") << l;
    const size_t eq = l.find("arg1=");
    ASSERT_NE(eq, std::string::npos) << l;
    args.push_back(std::stol(l.substr(eq + 5)));
  }
  ASSERT_EQ(args.size(), static_cast<size_t>(kSteps)) << joined(script_lines(out));
  for (long k = 0; k < kSteps; ++k) EXPECT_EQ(args[k], k);
  expect_seen_paths(r, out);
}

// The USDT probe of a library the process loads later, by name, from a
// directory only the root's ld.so.cache names: its semaphore is set by the
// kernel when the process maps the file.
TEST_F(Containers, UsdtProbesOfALibraryLoadedLater) {
  auto root = start(spec(kContA), "root");
  ASSERT_EQ(root->error(), "");
  const std::string out = file("usdt-late.data");
  Result target;
  Result r = record_in(*root, out, {"--usdt=libcontplug.so:plug:call"}, &target);
  ASSERT_TRUE(r.exited(0)) << r.describe();
  ASSERT_TRUE(target.exited(0)) << target.describe();
  std::vector<long> args;
  for (const auto& l : script_lines(out)) {
    if (l.rfind("usdt:", 0) != 0) continue;
    EXPECT_NE(l.find("plug:call"), std::string::npos) << l;
    const size_t eq = l.find("arg1=");
    ASSERT_NE(eq, std::string::npos) << l;
    args.push_back(std::stol(l.substr(eq + 5)));
  }
  ASSERT_EQ(args.size(), static_cast<size_t>(kPlugs)) << joined(script_lines(out)) << r.err;
  for (long k = 0; k < kPlugs; ++k) EXPECT_EQ(args[k], k);
  expect_seen_paths(r, out);
}

// A library the process loads by name after atrace attached, from a
// directory only the root knows of: found the way the process's dynamic
// linker finds it, inside the root: by the root's ld.so.cache, the
// process's LD_LIBRARY_PATH, or the program's RUNPATH (/opt/app).
class ContainersLate : public Containers, public ::testing::WithParamInterface<const char*> {};

TEST_P(ContainersLate, LibraryLoadedLaterByName) {
  PrivateRootSpec s = spec(kContA);
  std::string plug = kPlug;
  if (std::string(GetParam()) == "ld_library_path") {
    s.ld_conf_dirs.clear();  // no cache entry: only LD_LIBRARY_PATH names it
    s.ld_library_path = "/opt/plugins";
  } else if (std::string(GetParam()) == "runpath") {
    s.ld_conf_dirs.clear();
    plug = "/opt/app/libcontplug.so";
    s.copies = {{kContA, kLib}, {kContPlug, plug}};
  }
  auto root = start(s, "root");
  ASSERT_EQ(root->error(), "");
  const std::string out = file("late.data");
  Result target;
  Result r =
      record_in(*root, out, {"--select=libcontplug.so:plug_fn,libcont.so:cont_step"}, &target);
  ASSERT_TRUE(r.exited(0)) << r.describe();
  ASSERT_TRUE(target.exited(0)) << target.describe();
  EXPECT_EQ(printed_count(target.out, "plug_fn").value_or(-1), kPlugs);
  EXPECT_NE(
      r.err.find(std::string("libcontplug.so is not loaded yet: waiting for it (1 probe on ") +
                 plug + ","),
      std::string::npos)
      << r.err;
  auto rep = report_json(out);
  ASSERT_TRUE(rep);
  EXPECT_EQ((*rep)["lost_events"], 0);
  EXPECT_EQ(calls_of(*rep, "plug_fn"), kPlugs) << function_names(*rep);
  EXPECT_EQ(calls_of(*rep, "cont_step"), kSteps) << function_names(*rep);
  EXPECT_EQ(function_field(*rep, "plug_fn", "unfinished"), 0);
  expect_seen_paths(r, out);
  expect_no_uprobe_events_left();
}

INSTANTIATE_TEST_SUITE_P(Integration, ContainersLate,
                         ::testing::Values("ld_so_cache", "ld_library_path", "runpath"));

// Selectors may name a module by the path the process knows it by, mapped
// or not yet.
TEST_F(Containers, SelectedByThePathsTheProcessKnows) {
  auto root = start(spec(kContA), "root");
  ASSERT_EQ(root->error(), "");
  const std::string out = file("paths.data");
  Result target;
  Result r = record_in(
      *root, out, {"--select=" + std::string(kLib) + ":cont_step," + kPlug + ":plug_fn"}, &target);
  ASSERT_TRUE(r.exited(0)) << r.describe();
  ASSERT_TRUE(target.exited(0)) << target.describe();
  auto rep = report_json(out);
  ASSERT_TRUE(rep);
  EXPECT_EQ(calls_of(*rep, "cont_step"), kSteps) << function_names(*rep);
  EXPECT_EQ(calls_of(*rep, "plug_fn"), kPlugs) << function_names(*rep);
  expect_seen_paths(r, out);
}

// --args=cont_add@auto: the parameters named and typed from the debug
// information of the root's file.
TEST_F(Containers, ArgumentsFromTheDebugInfoOfTheRootsFile) {
  auto root = start(spec(kContA), "root");
  ASSERT_EQ(root->error(), "");
  const std::string out = file("args.data");
  Result target;
  Result r = record_in(
      *root, out, {"--select=libcont.so:cont_add", "--args=libcont.so:cont_add@auto"}, &target);
  ASSERT_TRUE(r.exited(0)) << r.describe();
  ASSERT_TRUE(target.exited(0)) << target.describe();
  std::vector<std::string> entries;
  for (const auto& l : script_lines(out))
    if (l.rfind("entry:", 0) == 0) entries.push_back(l.substr(l.find_first_not_of(' ', 6)));
  const std::vector<std::string> want = {"cont_add(a=1, b=10)", "cont_add(a=2, b=20)",
                                         "cont_add(a=3, b=30)"};
  EXPECT_EQ(entries, want) << r.err;
  expect_seen_paths(r, out);
}

// --follow-forks inside the root: a child the process forks after atrace
// attached is traced too, in the same file, its calls exact.
TEST_F(Containers, FollowForksInsideTheRoot) {
  PrivateRootSpec s = spec(kContA);
  s.args.push_back("--fork");
  auto root = start(s, "root");
  ASSERT_EQ(root->error(), "");
  const std::string out = file("forks.data");
  Result target;
  Result r = record_in(*root, out, {"--select=libcont.so:cont_*", "--follow-forks"}, &target);
  ASSERT_TRUE(r.exited(0)) << r.describe();
  ASSERT_TRUE(target.exited(0)) << target.describe();
  EXPECT_EQ(printed_count(target.out, "forked").value_or(-1), 1) << target.describe();
  auto rep = report_json(out);
  ASSERT_TRUE(rep);
  EXPECT_EQ((*rep)["lost_events"], 0);
  EXPECT_EQ(calls_of(*rep, "cont_work"), 2) << function_names(*rep);
  EXPECT_EQ(calls_of(*rep, "cont_step"), 2 * kSteps) << function_names(*rep);
  EXPECT_EQ(calls_of(*rep, "cont_add"), 2 * kAdds) << function_names(*rep);
  // Each process's own under its pid: the parent's half, by its host pid.
  auto parent = report_json(out, {"--pid", std::to_string(root->host_pid())});
  ASSERT_TRUE(parent);
  EXPECT_EQ(calls_of(*parent, "cont_step"), kSteps) << function_names(*parent);
  expect_seen_paths(r, out);
}

// A selector that matches nothing says so in one line, with the paths the
// process knows (not the ones atrace reaches them by).
TEST_F(Containers, ErrorsNameThePathsTheProcessKnows) {
  auto root = start(spec(kContA), "root");
  ASSERT_EQ(root->error(), "");
  const std::string pid = std::to_string(root->host_pid());
  auto rec = [&](const std::string& select) {
    return run({Paths::atrace, "record", "-p", pid, "-o", file("e.data"), "--no-kernel",
                "--select=" + select});
  };
  EXPECT_EQ(expect_one_error_line(rec("no_such_fn")),
            "atrace: selector 'no_such_fn' matches no function in the main executable "
            "(/opt/app/target_cont)");
  EXPECT_EQ(expect_one_error_line(rec("/opt/nope.so:x")),
            "atrace: selector '/opt/nope.so:x': /opt/nope.so: No such file or directory");
  EXPECT_EQ(expect_one_error_line(rec("libcont.so:no_such_fn")),
            "atrace: selector 'libcont.so:no_such_fn' matches no function in any loaded module "
            "matching 'libcont.so'");
}

// The process (its root with it) is killed while atrace attaches, at
// moments from before atrace looks to after it recorded: whatever the
// moment, atrace ends (no hang) with a trace, or fails with a last line
// saying the process is gone (after the probing line when it got that
// far), never a path of the vanished root, and leaves no probe behind.
TEST_F(Containers, KilledWhileAtraceAttaches) {
  for (int delay_ms : {0, 20, 50, 100, 200, 400}) {
    SCOPED_TRACE("killed after " + std::to_string(delay_ms) + " ms");
    auto root = start(spec(kContA), "root-" + std::to_string(delay_ms));
    ASSERT_EQ(root->error(), "");
    const pid_t pid = root->host_pid();
    Child atrace({Paths::atrace, "record", "-p", std::to_string(pid), "-o",
                  file(std::to_string(delay_ms) + ".data"), "--no-kernel",
                  "--select=libcont.so:*"});
    std::this_thread::sleep_for(milliseconds(delay_ms));
    ::kill(pid, SIGKILL);
    Result r = atrace.wait(milliseconds(30000));
    ASSERT_FALSE(r.timed_out) << r.describe();
    ASSERT_EQ(r.term_signal, 0) << r.describe();
    if (r.exit_code == 0) continue;  // attached in time: recorded until the end
    EXPECT_GT(r.exit_code, 0) << r.describe();
    EXPECT_EQ(r.err.find("/proc/"), std::string::npos) << r.err;
    std::string err = r.err;
    while (!err.empty() && err.back() == '\n') err.pop_back();
    const std::string line =
        err.substr(err.rfind('\n') == std::string::npos ? 0 : err.rfind('\n') + 1);
    const std::string p = std::to_string(pid);
    EXPECT_TRUE(line == "atrace: no process with pid " + p ||
                line == "atrace: process " + p + " exited while atrace attached: nothing to record")
        << line;
  }
  expect_no_uprobe_events_left();
}

// Two roots, each with its own build of libcont.so at the same path, traced
// at the same time by two recordings: each gets the functions and offsets
// of its own file (B's extra function first moves every other one).
TEST_F(Containers, TwoRootsWithDifferentBuildsAtTheSamePath) {
  auto a = start(spec(kContA), "root-a");
  auto b = start(spec(kContB), "root-b");
  ASSERT_EQ(a->error(), "");
  ASSERT_EQ(b->error(), "");
  const std::string out_a = file("a.data"), out_b = file("b.data");
  auto atrace_a = attach(a->host_pid(), out_a, {"--select=libcont.so:cont_*"});
  auto atrace_b = attach(b->host_pid(), out_b, {"--select=libcont.so:cont_*"});
  ASSERT_TRUE(std::filesystem::exists(out_a)) << atrace_a->wait(milliseconds(1000)).describe();
  ASSERT_TRUE(std::filesystem::exists(out_b)) << atrace_b->wait(milliseconds(1000)).describe();
  ::kill(a->host_pid(), SIGUSR1);
  ::kill(b->host_pid(), SIGUSR1);
  Result ta = a->wait(milliseconds(30000)), tb = b->wait(milliseconds(30000));
  Result ra = atrace_a->wait(milliseconds(30000)), rb = atrace_b->wait(milliseconds(30000));
  ASSERT_TRUE(ta.exited(0)) << ta.describe();
  ASSERT_TRUE(tb.exited(0)) << tb.describe();
  ASSERT_TRUE(ra.exited(0)) << ra.describe();
  ASSERT_TRUE(rb.exited(0)) << rb.describe();
  EXPECT_EQ(printed_value(ta.out, "variant").value_or("?"), "A");
  EXPECT_EQ(printed_value(tb.out, "variant").value_or("?"), "B");

  auto rep_a = report_json(out_a);
  auto rep_b = report_json(out_b);
  ASSERT_TRUE(rep_a && rep_b);
  EXPECT_EQ((*rep_a)["lost_events"], 0);
  EXPECT_EQ((*rep_b)["lost_events"], 0);
  for (const auto* rep : {&*rep_a, &*rep_b}) {
    EXPECT_EQ(calls_of(*rep, "cont_work"), 1) << function_names(*rep);
    EXPECT_EQ(calls_of(*rep, "cont_step"), kSteps) << function_names(*rep);
    EXPECT_EQ(calls_of(*rep, "cont_add"), kAdds) << function_names(*rep);
  }
  EXPECT_EQ(find_function(*rep_a, "cont_only_b"), nullptr) << function_names(*rep_a);
  EXPECT_EQ(calls_of(*rep_b, "cont_only_b"), kSteps) << function_names(*rep_b);
  // Each trace's module is its own root's build.
  const std::string id_a = uprobes::read_build_id(kContA), id_b = uprobes::read_build_id(kContB);
  ASSERT_NE(id_a, id_b);
  const std::string lines_a = joined(script_lines(out_a)), lines_b = joined(script_lines(out_b));
  EXPECT_NE(lines_a.find("build_id=" + id_a), std::string::npos) << lines_a;
  EXPECT_EQ(lines_a.find("build_id=" + id_b), std::string::npos) << lines_a;
  EXPECT_NE(lines_b.find("build_id=" + id_b), std::string::npos) << lines_b;
  EXPECT_EQ(lines_b.find("build_id=" + id_a), std::string::npos) << lines_b;
  expect_seen_paths(ra, out_a);
  expect_seen_paths(rb, out_b);
  expect_no_uprobe_events_left();
}

// Two roots sharing one file (the host's libcont.so bind-mounted into
// both: one inode, so one set of kernel uprobes): each recording counts its
// own process's calls, exactly, and only those.
TEST_F(Containers, TwoRootsSharingOneFile) {
  PrivateRootSpec s1 = spec(kContA), s2 = spec(kContA);
  for (auto* s : {&s1, &s2}) {
    s->copies = {{kContPlug, kPlug}};
    s->binds = {{kContA, kLib}};
  }
  s2.args[0] = std::to_string(2 * kSteps);  // the second makes twice the calls
  auto a = start(s1, "root-1");
  auto b = start(s2, "root-2");
  ASSERT_EQ(a->error(), "");
  ASSERT_EQ(b->error(), "");
  const std::string out_a = file("1.data"), out_b = file("2.data");
  auto atrace_a = attach(a->host_pid(), out_a, {"--select=libcont.so:cont_*"});
  auto atrace_b = attach(b->host_pid(), out_b, {"--select=libcont.so:cont_*"});
  ASSERT_TRUE(std::filesystem::exists(out_a)) << atrace_a->wait(milliseconds(1000)).describe();
  ASSERT_TRUE(std::filesystem::exists(out_b)) << atrace_b->wait(milliseconds(1000)).describe();
  ::kill(a->host_pid(), SIGUSR1);
  ::kill(b->host_pid(), SIGUSR1);
  Result ta = a->wait(milliseconds(30000)), tb = b->wait(milliseconds(30000));
  Result ra = atrace_a->wait(milliseconds(30000)), rb = atrace_b->wait(milliseconds(30000));
  ASSERT_TRUE(ta.exited(0)) << ta.describe();
  ASSERT_TRUE(tb.exited(0)) << tb.describe();
  ASSERT_TRUE(ra.exited(0)) << ra.describe();
  ASSERT_TRUE(rb.exited(0)) << rb.describe();
  auto rep_a = report_json(out_a);
  auto rep_b = report_json(out_b);
  ASSERT_TRUE(rep_a && rep_b);
  EXPECT_EQ(calls_of(*rep_a, "cont_step"), kSteps) << function_names(*rep_a);
  EXPECT_EQ(calls_of(*rep_b, "cont_step"), 2 * kSteps) << function_names(*rep_b);
  EXPECT_EQ(calls_of(*rep_a, "cont_add"), kAdds);
  EXPECT_EQ(calls_of(*rep_b, "cont_add"), kAdds);
  expect_seen_paths(ra, out_a);
  expect_seen_paths(rb, out_b);
  expect_no_uprobe_events_left();
}

// The inode number of the first mapping of `path` in /proc/PID/maps (""
// when none). Of an overlay's file, maps shows the overlay mount's device
// (one per container) with the inode number of the layer's file.
std::string mapped_inode(pid_t pid, const std::string& path) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  for (std::string line; std::getline(maps, line);) {
    if (line.size() < path.size() || line.compare(line.size() - path.size(), path.size(), path))
      continue;
    std::istringstream in(line);
    std::string range, perms, offset, dev, inode;
    in >> range >> perms >> offset >> dev >> inode;
    return inode;
  }
  return "";
}

// Two roots whose /opt/app is an overlayfs over one host directory (one
// image layer, as containers made from one image have): the kernel maps
// the layer's one file in both, so their probes are on one inode; each
// recording counts its own process's calls, exactly.
TEST_F(Containers, TwoRootsSharingOneOverlayLayer) {
  const std::string layer = file("layer");
  std::filesystem::create_directories(layer);
  std::filesystem::copy_file(kContA, layer + "/libcont.so");
  PrivateRootSpec s1 = spec(kContA), s2 = spec(kContA);
  for (auto* s : {&s1, &s2}) {
    s->copies = {{kContPlug, kPlug}};
    s->overlays = {{layer, "/opt/app"}};
  }
  s2.args[0] = std::to_string(2 * kSteps);
  auto a = start(s1, "root-1");
  auto b = start(s2, "root-2");
  ASSERT_EQ(a->error(), "");
  ASSERT_EQ(b->error(), "");
  const std::string inode = mapped_inode(a->host_pid(), "/opt/app/libcont.so");
  ASSERT_NE(inode, "");
  EXPECT_EQ(mapped_inode(b->host_pid(), "/opt/app/libcont.so"), inode)
      << "the two roots must map the layer's one file";
  struct stat layer_file;
  ASSERT_EQ(::stat((layer + "/libcont.so").c_str(), &layer_file), 0);
  EXPECT_EQ(inode, std::to_string(layer_file.st_ino)) << "the layer's file is what is mapped";
  // atrace knows the file in both by the layer's identity, as the kernel's
  // uprobes do: one module, where maps shows each overlay's device.
  const uprobes::FileId layer_id{layer_file.st_dev, layer_file.st_ino};
  for (const PrivateRoot* r : {a.get(), b.get()}) {
    EXPECT_TRUE(uprobes::file_id(r->reach(kLib)) == layer_id);
    bool mapped = false;
    for (const auto& m : uprobes::file_mappings(r->host_pid()))
      if (m.path.size() > 11 && m.path.compare(m.path.size() - 11, 11, "/libcont.so") == 0) {
        mapped = true;
        EXPECT_TRUE(m.id == layer_id) << m.path;
      }
    EXPECT_TRUE(mapped);
  }
  const std::string out_a = file("1.data"), out_b = file("2.data");
  auto atrace_a = attach(a->host_pid(), out_a, {"--select=libcont.so:cont_*"});
  auto atrace_b = attach(b->host_pid(), out_b, {"--select=libcont.so:cont_*"});
  ASSERT_TRUE(std::filesystem::exists(out_a)) << atrace_a->wait(milliseconds(1000)).describe();
  ASSERT_TRUE(std::filesystem::exists(out_b)) << atrace_b->wait(milliseconds(1000)).describe();
  ::kill(a->host_pid(), SIGUSR1);
  ::kill(b->host_pid(), SIGUSR1);
  Result ta = a->wait(milliseconds(30000)), tb = b->wait(milliseconds(30000));
  Result ra = atrace_a->wait(milliseconds(30000)), rb = atrace_b->wait(milliseconds(30000));
  ASSERT_TRUE(ta.exited(0)) << ta.describe();
  ASSERT_TRUE(tb.exited(0)) << tb.describe();
  ASSERT_TRUE(ra.exited(0)) << ra.describe();
  ASSERT_TRUE(rb.exited(0)) << rb.describe();
  auto rep_a = report_json(out_a);
  auto rep_b = report_json(out_b);
  ASSERT_TRUE(rep_a && rep_b);
  EXPECT_EQ(calls_of(*rep_a, "cont_step"), kSteps) << function_names(*rep_a);
  EXPECT_EQ(calls_of(*rep_b, "cont_step"), 2 * kSteps) << function_names(*rep_b);
  EXPECT_EQ(calls_of(*rep_a, "cont_add"), kAdds);
  EXPECT_EQ(calls_of(*rep_b, "cont_add"), kAdds);
  expect_seen_paths(ra, out_a);
  expect_seen_paths(rb, out_b);
  expect_no_uprobe_events_left();
}

// One recording of both processes (-p A,B): each process's calls are
// exact under its own pid, whether the roots have two builds of the
// library at one path (two modules, B's functions at other offsets) or
// share one layer's file (one module: probed once, not once per root).
class ContainersPidList : public Containers, public ::testing::WithParamInterface<const char*> {};

TEST_P(ContainersPidList, EachProcessExactInOneRecording) {
  const bool shared = std::string(GetParam()) == "one_layer";
  PrivateRootSpec s1 = spec(kContA), s2 = spec(shared ? kContA : kContB);
  if (shared) {
    const std::string layer = file("layer");
    std::filesystem::create_directories(layer);
    std::filesystem::copy_file(kContA, layer + "/libcont.so");
    for (auto* s : {&s1, &s2}) {
      s->copies = {{kContPlug, kPlug}};
      s->overlays = {{layer, "/opt/app"}};
    }
  }
  s2.args[0] = std::to_string(2 * kSteps);
  auto a = start(s1, "root-1");
  auto b = start(s2, "root-2");
  ASSERT_EQ(a->error(), "");
  ASSERT_EQ(b->error(), "");
  const std::string pa = std::to_string(a->host_pid()), pb = std::to_string(b->host_pid());
  const std::string out = file("ab.data");
  Child atrace({Paths::atrace, "record", "-p", pa + "," + pb, "-o", out, "--no-kernel",
                "--filter=off", "--select=libcont.so:cont_*"});
  const auto deadline = std::chrono::steady_clock::now() + scaled(milliseconds(30000));
  while (!std::filesystem::exists(out) && atrace.running() &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(milliseconds(20));
  ASSERT_TRUE(std::filesystem::exists(out)) << atrace.wait(milliseconds(1000)).describe();
  ::kill(a->host_pid(), SIGUSR1);
  ::kill(b->host_pid(), SIGUSR1);
  Result ta = a->wait(milliseconds(30000)), tb = b->wait(milliseconds(30000));
  Result r = atrace.wait(milliseconds(30000));  // ends with the last of them
  ASSERT_TRUE(ta.exited(0)) << ta.describe();
  ASSERT_TRUE(tb.exited(0)) << tb.describe();
  ASSERT_TRUE(r.exited(0)) << r.describe();
  auto rep_a = report_json(out, {"--pid", pa});
  auto rep_b = report_json(out, {"--pid", pb});
  ASSERT_TRUE(rep_a && rep_b);
  EXPECT_EQ((*rep_a)["lost_events"], 0);
  EXPECT_EQ(calls_of(*rep_a, "cont_step"), kSteps) << function_names(*rep_a);
  EXPECT_EQ(calls_of(*rep_b, "cont_step"), 2 * kSteps) << function_names(*rep_b);
  EXPECT_EQ(calls_of(*rep_a, "cont_add"), kAdds) << function_names(*rep_a);
  EXPECT_EQ(calls_of(*rep_b, "cont_add"), kAdds) << function_names(*rep_b);
  EXPECT_EQ(find_function(*rep_a, "cont_only_b"), nullptr) << function_names(*rep_a);
  if (shared) EXPECT_EQ(find_function(*rep_b, "cont_only_b"), nullptr);
  else EXPECT_EQ(calls_of(*rep_b, "cont_only_b"), 2 * kSteps) << function_names(*rep_b);
  expect_seen_paths(r, out);
  expect_no_uprobe_events_left();
}

INSTANTIATE_TEST_SUITE_P(Integration, ContainersPidList,
                         ::testing::Values("two_builds", "one_layer"));

// bpftrace, attached through /proc/PID/root to the same file in the same
// run, counts what atrace counts.
TEST_F(Containers, SameCountsAsBpftraceThroughProcRoot) {
  if (::system("command -v bpftrace >/dev/null 2>&1") != 0) {
    if (in_ci()) FAIL() << "CI=true and bpftrace is not installed";
    GTEST_SKIP() << "bpftrace is not installed";
  }
  auto root = start(spec(kContA), "root");
  ASSERT_EQ(root->error(), "");
  const std::string lib = root->reach(kLib);
  const std::string pid = std::to_string(root->host_pid());
  Child bpftrace({"bpftrace", "-p", pid, "-e",
                  "uprobe:" + lib + ":cont_step /pid == " + pid + "/ { @step = count(); } " +
                      "uprobe:" + lib + ":cont_add /pid == " + pid + "/ { @add = count(); }"});
  ASSERT_TRUE(bpftrace.wait_for_line("Attaching", milliseconds(30000)))
      << bpftrace.wait(milliseconds(1000)).describe();
  const std::string out = file("x.data");
  Result target;
  Result r = record_in(*root, out, {"--select=libcont.so:cont_step,libcont.so:cont_add"}, &target);
  ASSERT_TRUE(r.exited(0)) << r.describe();
  ASSERT_TRUE(target.exited(0)) << target.describe();
  // bpftrace -p ends with its process and prints its maps.
  Result bt = bpftrace.wait(milliseconds(30000));
  ASSERT_TRUE(bt.exited(0)) << bt.describe();
  auto count = [&](const std::string& map) -> long {
    const size_t at = bt.out.find(map + ": ");
    return at == std::string::npos ? -1 : std::stol(bt.out.substr(at + map.size() + 2));
  };
  auto rep = report_json(out);
  ASSERT_TRUE(rep);
  EXPECT_EQ(count("@step"), kSteps) << bt.describe();
  EXPECT_EQ(count("@add"), kAdds) << bt.describe();
  EXPECT_EQ(calls_of(*rep, "cont_step"), count("@step")) << function_names(*rep);
  EXPECT_EQ(calls_of(*rep, "cont_add"), count("@add")) << function_names(*rep);
}

}  // namespace
}  // namespace atrace::it
