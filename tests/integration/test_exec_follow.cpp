// Launch mode follows the command through exec (issue 17,
// record/exec_follow.h): a shell-script shim, a chain sh -> env -> program,
// --follow-forks where a child runs the shim, and a chain where nothing
// matches. Then Python importing a C extension after start, whose library
// (libssl.so.3, loaded by dlopen with the `_ssl` extension) is probed
// before it is mapped: launch, attach (-p) and --follow-forks. Counts are
// exact: target_c prints its own, and SSL_CTX_new runs once per
// ssl.SSLContext() (checked untraced with bpftrace: N contexts, N calls).
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/integration/fixture.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

constexpr long kN = 6;  // target_c's N: middle N times, leaf 3N

class ExecFollow : public IntegrationTest {
 protected:
  // An executable shell script in the temp dir.
  std::string script(const std::string& name, const std::string& body) {
    const std::string path = file(name);
    std::ofstream(path) << "#!/bin/sh\n" << body;
    chmod(path.c_str(), 0755);
    return path;
  }
  // `#!/bin/sh\nexec TARGET "$@"`: the shim the issue describes.
  std::string shim() {
    return script("shim", std::string("exec ") + Paths::target_c + " \"$@\"\n");
  }

  // target_c's counts, printed and recorded, agree: middle N, leaf 3N.
  void expect_target_counts(const std::string& trace, const Result& r, long n) {
    EXPECT_EQ(printed_count(r.out, "middle").value_or(-1), n) << r.describe();
    auto rep = report_json(trace);
    ASSERT_TRUE(rep) << r.describe();
    EXPECT_EQ((*rep)["lost_events"], 0);
    EXPECT_EQ(calls_of(*rep, "middle"), n) << function_names(*rep);
    EXPECT_EQ(calls_of(*rep, "leaf"), 3 * n) << function_names(*rep);
  }

  // `script`'s exec lines: "exec: PATH".
  std::vector<std::string> exec_lines(const std::string& trace) {
    Result s = run({Paths::atrace, "script", "-i", trace, "--fields=kind,details"});
    EXPECT_TRUE(s.exited(0)) << s.describe();
    std::vector<std::string> lines;
    std::istringstream in(s.out);
    for (std::string line; std::getline(in, line);)
      if (line.rfind("exec:", 0) == 0) lines.push_back(line);
    return lines;
  }
};

// A shell script that execs the target with its arguments: traced through
// it, counts exact, the target's output and exit status unchanged, and the
// exec in `script`.
TEST_F(ExecFollow, ShellScriptShim) {
  const std::string out = file("shim.data");
  Result r = record(out, "middle,leaf", {shim(), std::to_string(kN), "--exit=3", tag_arg()});
  ASSERT_TRUE(r.exited(3)) << r.describe();
  EXPECT_NE(r.err.find(std::string("atrace: tracing ") + Paths::target_c), std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("leaf=" + std::to_string(3 * kN)), std::string::npos) << r.out;
  expect_target_counts(out, r, kN);
  const auto execs = exec_lines(out);
  ASSERT_EQ(execs.size(), 1u) << r.describe();
  EXPECT_NE(execs[0].find(Paths::target_c), std::string::npos) << execs[0];
  expect_no_uprobe_events_left();
}

// sh -> env -> target.
TEST_F(ExecFollow, TwoLevelChain) {
  const std::string chain =
      script("chain", std::string("exec /usr/bin/env ") + Paths::target_c + " \"$@\"\n");
  const std::string out = file("chain.data");
  Result r = record(out, "middle,leaf", {chain, std::to_string(kN), tag_arg()});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  EXPECT_NE(r.err.find("/usr/bin/env"), std::string::npos) << r.err;  // what ran before
  expect_target_counts(out, r, kN);
  expect_no_uprobe_events_left();
}

// --follow-forks: a script whose child runs the shim, then goes on.
TEST_F(ExecFollow, FollowForksChildExecsTheShim) {
  const std::string parent =
      script("parent", "\"" + shim() + "\" \"$@\"\necho child-status=$?\nexit 4\n");
  const std::string out = file("forks.data");
  Result r =
      record(out, "middle,leaf", {parent, std::to_string(kN), tag_arg()}, {"--follow-forks"});
  ASSERT_TRUE(r.exited(4)) << r.describe();
  EXPECT_NE(r.out.find("child-status=0"), std::string::npos) << r.out;
  expect_target_counts(out, r, kN);
  expect_no_uprobe_events_left();
}

// Nothing along the chain matches: the command ran, one line names what
// ran, exit status 1, no trace (docs/selectors.md).
TEST_F(ExecFollow, NoMatchAnywhere) {
  const std::string chain = script("nomatch", "exec /usr/bin/env /bin/true \"$@\"\n");
  const std::string out = file("none.data");
  Result r = record(out, "leaf", {chain, tag_arg()});
  const std::string line = expect_one_error_line(r);
  EXPECT_EQ(r.exit_code, 1);
  auto real = [](const char* path) {
    char buf[PATH_MAX];
    return std::string(realpath(path, buf) ? buf : path);
  };
  EXPECT_EQ(line, "atrace: no function matched 'leaf' in anything the command ran: " +
                      real("/bin/sh") + ", " + real("/usr/bin/env") + ", " + real("/bin/true"))
      << line;
  EXPECT_FALSE(std::ifstream(out)) << "a trace was left";
  expect_no_uprobe_events_left();
}

// With --follow-forks a program that matches some selectors but not all is
// followed on; when nothing matched, the line names the selector that
// matched nothing where, not the whole list (issue 31).
TEST_F(ExecFollow, FollowForksNamesTheSelectorThatMatchedNothing) {
  const std::string out = file("partial.data");
  Result r = record(out, "leaf,nomatchfn", {Paths::target_c, "3", tag_arg()}, {"--follow-forks"});
  const std::string line = expect_one_error_line(r);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(line.find("matched the selectors: selector 'nomatchfn' matches no function in the "
                      "main executable"),
            std::string::npos)
      << line;
  EXPECT_EQ(line.find("'leaf,nomatchfn'"), std::string::npos) << line;
  EXPECT_FALSE(std::ifstream(out)) << "a trace was left";
}

// A launched ELF program that matches nothing is still refused before it
// runs (it is followed only under --follow-forks).
TEST_F(ExecFollow, ElfProgramWithoutMatchNotStarted) {
  const std::string marker = file("ran");
  Result r = record(file("x.data"), "no_such_function_xyz",
                    {"/bin/sh", "-c", "touch " + marker, tag_arg()});
  expect_one_error_line(r);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_FALSE(std::ifstream(marker)) << "the command ran";
}

// The traced program execs itself again, twice (same pid, same file): its
// probes are bound to its file and to the process, so the kernel puts them
// into each new image as the exec maps it, before its first instruction.
// Every run is counted, on both attach paths, and `script` shows each exec.
TEST_F(ExecFollow, ProgramExecsItselfAgain) {
  for (const char* mode : {"--attach=multi", "--attach=perf"}) {
    const std::string out = file(std::string("reexec") + (mode + 9) + ".data");
    Result r = record(out, "middle,leaf",
                      {Paths::target_c, std::to_string(kN), "--reexec=2", tag_arg()}, {mode});
    ASSERT_TRUE(r.exited(0)) << mode << "\n" << r.describe();
    auto rep = report_json(out);
    ASSERT_TRUE(rep) << r.describe();
    EXPECT_EQ((*rep)["lost_events"], 0);
    EXPECT_EQ(calls_of(*rep, "middle"), 3 * kN) << mode << " " << function_names(*rep);
    EXPECT_EQ(calls_of(*rep, "leaf"), 9 * kN) << mode << " " << function_names(*rep);
    // The launch's exec, then the two the program made.
    const auto execs = exec_lines(out);
    EXPECT_EQ(execs.size(), 3u) << mode << "\n" << r.describe();
    for (const auto& line : execs) EXPECT_NE(line.find(Paths::target_c), std::string::npos) << line;
    expect_no_uprobe_events_left();
  }
}

// Through a shim: the program the shim execs matches, then execs itself
// again; both runs counted, both execs in `script`.
TEST_F(ExecFollow, ShimThenProgramExecsItself) {
  const std::string out = file("shim-reexec.data");
  Result r = record(out, "middle,leaf", {shim(), std::to_string(kN), "--reexec=1", tag_arg()});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  auto rep = report_json(out);
  ASSERT_TRUE(rep) << r.describe();
  EXPECT_EQ((*rep)["lost_events"], 0);
  EXPECT_EQ(calls_of(*rep, "middle"), 2 * kN) << function_names(*rep);
  EXPECT_EQ(calls_of(*rep, "leaf"), 6 * kN) << function_names(*rep);
  const auto execs = exec_lines(out);
  ASSERT_EQ(execs.size(), 2u) << r.describe();
  for (const auto& line : execs) EXPECT_NE(line.find(Paths::target_c), std::string::npos) << line;
  expect_no_uprobe_events_left();
}

// A wrapper that sets LD_LIBRARY_PATH, then execs a program that finds its
// library only there (no RUNPATH): the library is found with the
// LD_LIBRARY_PATH the program runs with, read from the process stopped at
// its exec, not with atrace's (which does not have it).
TEST_F(ExecFollow, WrapperSetsLdLibraryPath) {
  ASSERT_EQ(std::getenv("LD_LIBRARY_PATH"), nullptr) << "the test proves nothing with it set";
  const std::string lib = Paths::target_shared;
  const std::string dir = lib.substr(0, lib.rfind('/'));
  const std::string wrapper = script(
      "wrapper", "LD_LIBRARY_PATH=" + dir + " exec " + Paths::target_lib_norunpath + " \"$@\"\n");
  const std::string out = file("wrapper.data");
  Result r = record(out, "libtarget_shared.so:shared_fn", {wrapper, "40", tag_arg()});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  EXPECT_NE(r.err.find(std::string("atrace: tracing ") + Paths::target_lib_norunpath),
            std::string::npos)
      << r.err;
  EXPECT_EQ(printed_count(r.out, "shared_fn").value_or(-1), 40) << r.out;
  auto rep = report_json(out);
  ASSERT_TRUE(rep);
  EXPECT_EQ((*rep)["lost_events"], 0);
  EXPECT_EQ(calls_of(*rep, "shared_fn"), 40) << function_names(*rep);
  expect_no_uprobe_events_left();
}

// Python: /usr/bin/python3 and libssl.so.3 (Debian's python3 and libssl3,
// `make test` installs them).
constexpr const char* kPython = "/usr/bin/python3";
constexpr long kContexts = 7;

class PythonSsl : public ExecFollow {
 protected:
  void SetUp() override {
    ExecFollow::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    for (const char* need : {kPython, "/usr/lib/x86_64-linux-gnu/libssl.so.3"}) {
      if (std::ifstream(need)) continue;
      if (in_ci()) FAIL() << "CI=true and " << need << " is missing (make test installs it)";
      GTEST_SKIP() << need << " is missing";
    }
    // Makes N contexts after `import ssl`, in a child with --fork, after
    // the file --wait names exists with --wait. Nothing imports ssl before.
    std::ofstream(file("make_ctx.py")) << R"(import os, sys, time
n = int(sys.argv[1])
opts = sys.argv[2:]
for o in opts:
    if o.startswith("--wait="):
        print("ready", flush=True)
        while not os.path.exists(o[7:]):
            time.sleep(0.01)
def make():
    import ssl
    for _ in range(n):
        ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    print("made=%d" % n, flush=True)
if "--fork" in opts:
    pid = os.fork()
    if pid == 0:
        make()
        os._exit(0)
    os.waitpid(pid, 0)
    print("ssl-in-parent=%d" % ("ssl" in sys.modules), flush=True)
else:
    make()
)";
  }
  std::vector<std::string> python(std::vector<std::string> extra) {
    std::vector<std::string> cmd = {kPython, file("make_ctx.py"), std::to_string(kContexts)};
    for (auto& e : extra) cmd.push_back(std::move(e));
    cmd.push_back(tag_arg());
    return cmd;
  }
  void expect_contexts(const std::string& trace, const std::string& target_out) {
    EXPECT_EQ(printed_count(target_out, "made").value_or(-1), kContexts) << target_out;
    auto rep = report_json(trace);
    ASSERT_TRUE(rep);
    EXPECT_EQ((*rep)["lost_events"], 0);
    EXPECT_EQ(calls_of(*rep, "SSL_CTX_new"), kContexts) << function_names(*rep);
    EXPECT_EQ(function_field(*rep, "SSL_CTX_new", "unfinished"), 0);
  }
};

constexpr const char* kSslSelector = "libssl.so*:SSL_CTX_new";

TEST_F(PythonSsl, Launch) {
  const std::string out = file("launch.data");
  Result r = record(out, kSslSelector, python({}));
  ASSERT_TRUE(r.exited(0)) << r.describe();
  EXPECT_NE(r.err.find("waiting for it"), std::string::npos) << r.err;
  expect_contexts(out, r.out);
  expect_no_uprobe_events_left();
}

// Attach mode: the import happens after atrace attached.
TEST_F(PythonSsl, AttachBeforeImport) {
  const std::string go = file("go");
  Child target(python({"--wait=" + go}));
  ASSERT_TRUE(target.wait_for_line("ready", milliseconds(10000))) << target.out();
  const std::string out = file("attach.data");
  Child atrace({Paths::atrace, "record", "-p", std::to_string(target.pid()),
                std::string("--select=") + kSslSelector, "-o", out});
  // The trace file gets its name once the probes are in (output_file.h).
  auto deadline = std::chrono::steady_clock::now() + scaled(milliseconds(20000));
  while (!std::ifstream(out) && atrace.running() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(milliseconds(20));
  ASSERT_TRUE(std::ifstream(out)) << atrace.wait(milliseconds(1000)).describe();
  std::ofstream(go).put('1');
  Result end = target.wait(milliseconds(30000));
  ASSERT_TRUE(end.exited(0)) << end.describe();
  Result r = atrace.wait(milliseconds(30000));
  ASSERT_TRUE(r.exited(0)) << r.describe();
  expect_contexts(out, end.out);
  expect_no_uprobe_events_left();
}

// --follow-forks: only a child imports ssl.
TEST_F(PythonSsl, FollowForksChildImports) {
  const std::string out = file("forks.data");
  Result r = record(out, kSslSelector, python({"--fork"}), {"--follow-forks"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  EXPECT_EQ(printed_count(r.out, "ssl-in-parent").value_or(-1), 0) << r.out;
  expect_contexts(out, r.out);
  expect_no_uprobe_events_left();
}

}  // namespace
}  // namespace atrace::it
