// USDT probes that arrive later (issue 17): `--usdt=MODULE:provider:name`
// for a library the target loads with dlopen(3) after it started, named by
// file name or by path before it is mapped. The probes are bound to the
// file, their semaphores set by the kernel in each mapping of it: exact
// counts and arguments over a dlopen, dlclose, dlopen again, in launch and
// attach mode, and the code the semaphore guards runs only while traced.
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/integration/fixture.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

constexpr long kFirst = 7;   // probe hits before the dlclose
constexpr long kSecond = 5;  // probe hits after the second dlopen
constexpr const char* kSpec = "libtarget_usdt_plugin.so:plug:fire";

// `atrace script`'s plug:fire hits, as "k/round" ("0/1", "1/1", ...), and
// the MODULE lines of the plugin, in the trace's order as one string:
// 'L' a load, 'U' an unload, 'h' a plug:fire hit, 'c' a plug:loaded hit
// (the library's constructor).
struct Hits {
  std::vector<std::string> args;
  std::string order;
};

Hits plugin_hits(const std::string& trace) {
  Result s = run({Paths::atrace, "script", "-i", trace, "--fields=kind,details"});
  EXPECT_TRUE(s.exited(0)) << s.describe();
  const std::string module = std::string(" ") + Paths::target_usdt_plugin + " base=0x";
  Hits h;
  std::istringstream lines(s.out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream in(line);
    std::string kind, probe;
    in >> kind;
    if (kind == "module:" && line.find(module) != std::string::npos) h.order += 'L';
    if (kind == "module-unload:" && line.find(module) != std::string::npos) h.order += 'U';
    if (kind != "usdt:" || !(in >> probe)) continue;
    if (probe == "plug:loaded") h.order += 'c';
    if (probe != "plug:fire") continue;
    std::vector<std::string> args;
    for (std::string a; in >> a;) {
      if (a.front() == '[') continue;  // the module of a library's probe
      size_t eq = a.find('=');
      args.push_back(eq == std::string::npos ? a : a.substr(eq + 1));
    }
    h.args.push_back(args.size() == 2 ? args[0] + "/" + args[1] : line);
    h.order += 'h';
  }
  return h;
}

std::vector<std::string> expected_args() {
  std::vector<std::string> out;
  for (long k = 0; k < kFirst; ++k) out.push_back(std::to_string(k) + "/1");
  for (long k = 0; k < kSecond; ++k) out.push_back(std::to_string(k) + "/2");
  return out;
}

class LateUsdt : public IntegrationTest {
 protected:
  std::vector<std::string> command(const std::vector<std::string>& extra = {}) const {
    std::vector<std::string> c = {Paths::target_usdt_dlopen, std::to_string(kFirst),
                                  std::to_string(kSecond), tag_arg()};
    c.insert(c.end(), extra.begin(), extra.end());
    return c;
  }

  // The target's counts and the trace agree: N+M hits with their
  // arguments, each load before the hits it made possible, and the
  // semaphore-guarded code ran once per hit.
  // `constructor`: plug:loaded was selected too, and is seen at each load.
  void expect_hits(const std::string& trace, const std::string& target_out, bool constructor) {
    EXPECT_EQ(printed_count(target_out, "fired").value_or(-1), kFirst + kSecond) << target_out;
    EXPECT_EQ(printed_count(target_out, "guarded").value_or(-1), kFirst + kSecond)
        << "the semaphore was not set in each mapping of the library\n"
        << target_out;
    EXPECT_EQ(printed_count(target_out, "reloaded").value_or(-1), 1)
        << "dlclose did not unmap the plugin: the test proves less than it says";
    const Hits h = plugin_hits(trace);
    EXPECT_EQ(h.args, expected_args());
    const std::string load = constructor ? "Lc" : "L";
    EXPECT_EQ(h.order,
              load + std::string(kFirst, 'h') + "U" + load + std::string(kSecond, 'h') + "U");
    auto rep = report_json(trace);
    ASSERT_TRUE(rep);
    EXPECT_EQ((*rep)["lost_events"], 0);
  }

  void launch(const std::string& spec, bool constructor) {
    std::string out = file("late-usdt.data");
    Result r = record(out, "", command(), {"--usdt=" + spec, "--no-kernel"});
    ASSERT_TRUE(r.exited(0)) << r.describe();
    EXPECT_NE(r.err.find("libtarget_usdt_plugin.so is not loaded yet: waiting for it (" +
                         std::string(constructor ? "2 probes" : "1 probe") + " on"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(r.err.find("never ran"), std::string::npos) << r.err;
    expect_hits(out, r.out, constructor);
    expect_no_uprobe_events_left();
  }
};

// By file name glob, every probe of the provider: the constructor's probe
// is seen at each dlopen, the probes are in before the library's first
// instruction.
TEST_F(LateUsdt, LaunchByName) { launch("libtarget_usdt_plugin.so*:plug:*", true); }

TEST_F(LateUsdt, LaunchByAbsolutePath) {
  launch(std::string(Paths::target_usdt_plugin) + ":plug:fire", false);
}

// Untraced, the code behind the semaphore never runs: what the traced runs
// count is atrace's doing.
TEST_F(LateUsdt, SemaphoreOffUntraced) {
  Result r = run(command());
  ASSERT_TRUE(r.exited(0)) << r.describe();
  EXPECT_EQ(printed_count(r.out, "fired").value_or(-1), kFirst + kSecond) << r.out;
  EXPECT_EQ(printed_count(r.out, "guarded").value_or(-1), 0) << r.out;
}

// Attach mode: atrace attaches while the target waits; the target loads
// the library only then.
TEST_F(LateUsdt, AttachBeforeDlopen) {
  const std::string go = file("go");
  Child target(command({"--wait=" + go}));
  ASSERT_TRUE(target.wait_for_line("ready", milliseconds(10000))) << target.out();
  std::string out = file("attach.data");
  Child atrace({Paths::atrace, "record", "-p", std::to_string(target.pid()),
                std::string("--usdt=") + kSpec, "--no-kernel", "-o", out});
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
  expect_hits(out, end.out, false);
  expect_no_uprobe_events_left();
}

// A library waited for that the program never loads: the recording is
// made, its end says so, the exit status is the target's.
TEST_F(LateUsdt, ModuleThatNeverArrives) {
  Result r =
      record(file("never.data"), "", {Paths::target_c, "3", "--exit=5", tag_arg()},
             {std::string("--usdt=") + Paths::target_usdt_plugin + ":plug:fire", "--no-kernel"});
  ASSERT_TRUE(r.exited(5)) << r.describe();
  EXPECT_NE(r.err.find("waiting for it"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("atrace: libtarget_usdt_plugin.so, waited for, never ran"),
            std::string::npos)
      << r.err;
  expect_no_uprobe_events_left();
}

TEST_F(LateUsdt, PathThatDoesNotExist) {
  Result r = record(file("x.data"), "", command(),
                    {"--usdt=/nonexistent/libnope.so:plug:fire", "--no-kernel"});
  std::string line = expect_one_error_line(r);
  EXPECT_EQ(r.exit_code, 1);  // docs/selectors.md
  EXPECT_NE(line.find("USDT spec '/nonexistent/libnope.so:plug:fire'"), std::string::npos) << line;
  EXPECT_NE(line.find("No such file"), std::string::npos) << line;
  expect_no_uprobe_events_left();
}

TEST_F(LateUsdt, FileThatIsNotElf) {
  const std::string text = file("libtext.so");
  std::ofstream(text) << "not a library\n";
  Result r =
      record(file("x.data"), "", command(), {"--usdt=" + text + ":plug:fire", "--no-kernel"});
  std::string line = expect_one_error_line(r);
  EXPECT_EQ(r.exit_code, 1);  // docs/selectors.md
  EXPECT_NE(line.find("not an ELF file"), std::string::npos) << line;
  expect_no_uprobe_events_left();
}

// The library is found, its probe is not: the spec's usual error, naming
// what the library has, before the target runs.
TEST_F(LateUsdt, ProbeNotInLateLibrary) {
  Result r = record(file("x.data"), "", command(),
                    {"--usdt=libtarget_usdt_plugin.so:plug:nope", "--no-kernel"});
  std::string line = expect_one_error_line(r);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(
      line.find("matches no probe in libtarget_usdt_plugin.so (it has plug:fire, plug:loaded)"),
      std::string::npos)
      << line;
  expect_no_uprobe_events_left();
}

}  // namespace
}  // namespace atrace::it
