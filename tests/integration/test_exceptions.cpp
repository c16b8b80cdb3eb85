// Exception-safe return probes (issue 14, docs/exceptions.md): C++
// exceptions and forced unwinds (pthread_cancel, pthread_exit) through
// traced functions. The traced program must behave exactly as untraced
// (stdout, its own stderr, exit status), and the report must count every
// call, the unwound ones as `unwound`, against what target_exceptions says
// it did.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <sstream>
#include <thread>

#include "tests/integration/fixture.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

// stderr without atrace's own lines: what the traced program wrote.
std::string program_stderr(const std::string& err) {
  std::istringstream in(err);
  std::string line, out;
  while (std::getline(in, line))
    if (line.rfind("atrace: ", 0) != 0) out += line + "\n";
  return out;
}

class Exceptions : public IntegrationTest {
 protected:
  // Runs `args` untraced, then traced with `select` (and `extra`): the same
  // output and exit status; returns the report of the traced run.
  std::optional<nlohmann::json> traced_like_untraced(
      const std::vector<std::string>& args, const std::string& select,
      const std::vector<std::string>& extra = {}, const char* program = Paths::target_exceptions) {
    std::vector<std::string> cmd = {program};
    cmd.insert(cmd.end(), args.begin(), args.end());
    cmd.push_back(tag_arg());
    Result plain = run(cmd);
    EXPECT_TRUE(plain.exited(0)) << plain.describe();
    untraced_ = plain.out;
    std::string out = file("exceptions.data");
    Result traced = record(out, select, cmd, extra);
    EXPECT_FALSE(traced.timed_out) << traced.describe();
    EXPECT_EQ(traced.term_signal, 0) << traced.describe();
    EXPECT_EQ(traced.exit_code, plain.exit_code) << traced.describe();
    EXPECT_EQ(traced.out, plain.out) << traced.describe();
    EXPECT_EQ(program_stderr(traced.err), plain.err) << traced.describe();
    if (HasFailure()) return std::nullopt;
    data_ = out;
    return report_json(out);
  }

  // Every "NAME calls=C unwound=U" line of the untraced run against the
  // report: calls and unwound exact, nothing unfinished.
  void expect_counts(const nlohmann::json& rep, size_t expected_lines) {
    std::istringstream in(untraced_);
    std::string line;
    size_t checked = 0;
    while (std::getline(in, line)) {
      char name[64];
      long long calls = 0, unwound = 0;
      if (std::sscanf(line.c_str(), "%63s calls=%lld unwound=%lld", name, &calls, &unwound) != 3)
        continue;
      SCOPED_TRACE(line);
      EXPECT_EQ(calls_of(rep, name), calls) << function_names(rep);
      EXPECT_EQ(function_field(rep, name, "unwound"), unwound);
      EXPECT_EQ(function_field(rep, name, "unfinished"), 0);
      checked++;
    }
    EXPECT_EQ(checked, expected_lines) << untraced_;
  }

  std::string untraced_, data_;
};

TEST_F(Exceptions, ThrowCatchRethrowNestedAllTraced) {
  auto rep = traced_like_untraced({"throw", "30"}, "*");
  ASSERT_TRUE(rep);
  expect_counts(*rep, 9);
  // driver() survived every throw below it: its return was seen.
  EXPECT_EQ(function_field(*rep, "driver", "unwound"), 0);
}

// The same through perf-event links (the attach path of older kernels).
TEST_F(Exceptions, ThrowWithPerfLinks) {
  auto rep = traced_like_untraced({"throw", "6"},
                                  "thrower,mid,catch_top,deep,rethrower,outer_catch,"
                                  "nested,with_cleaner,driver",
                                  {"--attach=perf"});
  ASSERT_TRUE(rep);
  expect_counts(*rep, 9);
}

// The C++ runtime traced as well: __cxa_throw, the personality routine and
// the rest run inside the unwind, with return probes of their own.
TEST_F(Exceptions, ThrowWithTheCxxRuntimeTraced) {
  auto rep = traced_like_untraced({"throw", "10"}, "*,libstdc++.so*:__cxa_*,libstdc++.so*:__gxx_*");
  ASSERT_TRUE(rep);
  expect_counts(*rep, 9);
  // Each throw's __cxa_throw never returns: all of them unwound.
  const nlohmann::json* t = find_function(*rep, "__cxa_throw");
  ASSERT_NE(t, nullptr) << function_names(*rep);
  EXPECT_EQ((*t)["unwound"], (*t)["calls"]);
  EXPECT_GT((*t)["calls"].get<long long>(), 0);
}

TEST_F(Exceptions, ScriptShowsEachUnwoundCall) {
  auto rep = traced_like_untraced({"throw", "3"}, "*");
  ASSERT_TRUE(rep);
  Result s = run({Paths::atrace, "script", "-i", data_, "--fields=kind,details"});
  ASSERT_TRUE(s.exited(0)) << s.describe();
  long long lines = 0, unwound = 0;
  std::istringstream in(s.out);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("unwind:", 0) == 0) {
      lines++;
      EXPECT_NE(line.find(" caught"), std::string::npos) << line;
    }
  for (const auto& f : (*rep)["functions"]) unwound += f["unwound"].get<long long>();
  EXPECT_GT(unwound, 0);
  EXPECT_EQ(lines, unwound) << s.out;
}

TEST_F(Exceptions, PthreadCancelInsideTracedFrames) {
  auto rep = traced_like_untraced({"cancel"}, "*");
  ASSERT_TRUE(rep);
  expect_counts(*rep, 1);  // level calls=4 unwound=4
}

TEST_F(Exceptions, PthreadExitFromTracedDepth) {
  auto rep = traced_like_untraced({"exit"}, "*");
  ASSERT_TRUE(rep);
  expect_counts(*rep, 1);
}

// A C program: glibc loads libgcc_s.so.1 only when the thread unwinds.
TEST_F(Exceptions, ForcedUnwindsInAProgramWithoutLibgcc) {
  auto rep = traced_like_untraced({}, "*", {}, Paths::target_unwind_c);
  ASSERT_TRUE(rep);
  expect_counts(*rep, 2);
}

// ---- calls open when the recording stops (docs/exceptions.md) ----

// One byte into the FIFO `path` once its reader has it open.
bool write_fifo(const std::string& path, milliseconds timeout) {
  const auto end = std::chrono::steady_clock::now() + scaled(timeout);
  while (std::chrono::steady_clock::now() < end) {
    int fd = open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0) {
      bool ok = write(fd, "g", 1) == 1;
      close(fd);
      return ok;
    }
    if (errno != ENXIO) return false;  // ENXIO: no reader yet
    std::this_thread::sleep_for(milliseconds(5));
  }
  return false;
}

class OpenAtStop : public Exceptions {
 protected:
  // `target_exceptions hold now FIFO`, released by the test: what the
  // program prints untraced.
  Result untraced_hold() {
    std::string fifo = file("go.untraced");
    EXPECT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    Child t({Paths::target_exceptions, "hold", "now", fifo, tag_arg()});
    EXPECT_TRUE(t.wait_for_line("ready", scaled(milliseconds(30000))));
    EXPECT_TRUE(write_fifo(fifo, milliseconds(30000)));
    Result r = t.wait(scaled(milliseconds(30000)));
    EXPECT_TRUE(r.exited(0)) << r.describe();
    EXPECT_NE(r.out.find("spin: ended with 1"), std::string::npos) << r.out;
    return r;
  }

  // The program under `atrace record -p` (`extra`), entering its four calls
  // while recorded; `stop` ends the recording; once atrace has exited, the
  // calls unwind. Same output as untraced; the report counts each of the
  // calls once, unfinished.
  void attach_then_unwind(const std::vector<std::string>& extra, void (*stop)(Child&)) {
    Result plain = untraced_hold();
    std::string fifo = file("go"), out = file("open.data");
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    Child target({Paths::target_exceptions, "hold", "traced", fifo, tag_arg()});
    std::vector<std::string> argv = {Paths::atrace, "record", "-p", std::to_string(target.pid()),
                                     "--select=*",  "-o",     out};
    argv.insert(argv.end(), extra.begin(), extra.end());
    Child atrace(argv);
    ASSERT_TRUE(target.wait_for_line("ready", scaled(milliseconds(30000))))
        << atrace.wait(milliseconds(1000)).describe();
    stop(atrace);
    Result a = atrace.wait(scaled(milliseconds(60000)));
    ASSERT_TRUE(a.exited(0)) << a.describe();
    ASSERT_TRUE(write_fifo(fifo, milliseconds(30000)));
    Result traced = target.wait(scaled(milliseconds(30000)));
    EXPECT_EQ(traced.term_signal, 0) << traced.describe();
    EXPECT_EQ(traced.exit_code, plain.exit_code) << traced.describe();
    EXPECT_EQ(traced.out, plain.out) << traced.describe();
    EXPECT_EQ(traced.err, plain.err) << traced.describe();
    auto rep = report_json(out);
    ASSERT_TRUE(rep);
    expect_open_at_stop(*rep, true);
  }

  // Each of the calls open at the stop counted once. After atrace had gone
  // (`-p`) they end unrecorded: unfinished. A launched program goes on as
  // soon as its return_probed() lost its return probe, maybe while other
  // probes are still being detached (one by one with perf links): then a
  // catcher's return or a call's unwind in that window is recorded, as any
  // call's end in that window is.
  static void expect_open_at_stop(const nlohmann::json& rep, bool ended_after_exit) {
    for (const char* f : {"spin_catch", "read_catch"}) {
      SCOPED_TRACE(f);
      EXPECT_EQ(calls_of(rep, f), 1) << function_names(rep);
      EXPECT_EQ(function_field(rep, f, "unwound"), 0);
      if (ended_after_exit) {
        EXPECT_EQ(function_field(rep, f, "unfinished"), 1);
      }
    }
    for (const char* f : {"spin_frame", "read_frame", "epoll_frame", "cancel_frame"}) {
      SCOPED_TRACE(f);
      EXPECT_EQ(calls_of(rep, f), 1) << function_names(rep);
      long long unfinished = function_field(rep, f, "unfinished");
      long long unwound = function_field(rep, f, "unwound");
      EXPECT_EQ(unfinished + unwound, 1);
      if (ended_after_exit) {
        EXPECT_EQ(unwound, 0);
      }
    }
  }
};

// -p with --duration: four threads inside traced calls when the recording
// ends (one spinning in user space, three blocked in system calls); after
// atrace has exited, two throw through their call, one calls pthread_exit
// in it, one is cancelled in it. The blocked reads and epoll_wait return
// their data, not EINTR.
TEST_F(OpenAtStop, AttachDurationThenThrowExitCancel) {
  attach_then_unwind({"--duration=3"}, [](Child&) {});
}

// The same, the recording ended by SIGINT.
TEST_F(OpenAtStop, AttachSigintThenThrowExitCancel) {
  attach_then_unwind({}, [](Child& atrace) { atrace.signal(SIGINT); });
}

// Launch mode with --duration: atrace waits for the program, which unwinds
// once the probes are gone.
TEST_F(OpenAtStop, LaunchDurationThenThrowExitCancel) {
  std::vector<std::string> plain_cmd = {Paths::target_exceptions, "hold", "now", "untraced",
                                        tag_arg()};
  Result plain = run(plain_cmd);
  ASSERT_TRUE(plain.exited(0)) << plain.describe();
  std::string out = file("launch.data");
  Result traced =
      record(out, "*", {Paths::target_exceptions, "hold", "traced", "untraced", tag_arg()},
             {"--duration=2"});
  EXPECT_EQ(traced.term_signal, 0) << traced.describe();
  EXPECT_EQ(traced.exit_code, plain.exit_code) << traced.describe();
  EXPECT_EQ(traced.out, plain.out) << traced.describe();
  EXPECT_EQ(program_stderr(traced.err), plain.err) << traced.describe();
  auto rep = report_json(out);
  ASSERT_TRUE(rep);
  expect_open_at_stop(*rep, false);
}

// A Go program (marked by its .note.go.buildid section) cannot be made
// safe: one error, nothing started, no file.
TEST_F(Exceptions, GoProgramIsOneClearError) {
  if (access("/usr/bin/objcopy", X_OK) != 0) {
    if (in_ci()) FAIL() << "objcopy is not installed (binutils)";
    GTEST_SKIP() << "objcopy is not installed (binutils)";
  }
  std::string note = file("note"), go = file("fake_go"), out = file("go.data");
  Result mk = run({"sh", "-c", "printf go > " + note});
  ASSERT_TRUE(mk.exited(0)) << mk.describe();
  Result cp =
      run({"/usr/bin/objcopy", "--add-section", ".note.go.buildid=" + note, Paths::target_c, go});
  ASSERT_TRUE(cp.exited(0)) << cp.describe();
  Result r = record(out, "*", {go, "3", tag_arg()});
  std::string line = expect_one_error_line(r);
  EXPECT_NE(line.find("Go program"), std::string::npos) << line;
  EXPECT_NE(access(out.c_str(), F_OK), 0) << "a trace file was left behind";
}

// Python exceptions are not C++ unwinds; the interpreter, all of its own
// functions traced, must still run the script exactly as untraced. The
// script writes its stderr line in one write: atrace's own lines share the
// stream, and print() writes a line in pieces atrace's could fall between.
TEST_F(Exceptions, PythonRaiseAndCatchUnchanged) {
  if (access("/usr/bin/python3", X_OK) != 0) {
    if (in_ci()) FAIL() << "python3 is not installed";
    GTEST_SKIP() << "python3 is not installed";
  }
  const std::string script =
      "import sys\n"
      "def f(n):\n"
      "    if n % 3 == 0: raise ValueError(n)\n"
      "    return n\n"
      "s = 0\n"
      "for i in range(200):\n"
      "    try: s += f(i)\n"
      "    except ValueError as e: s -= int(str(e))\n"
      "print('sum', s)\n"
      "try:\n"
      "    raise KeyError('k')\n"
      "except KeyError as e: sys.stderr.write(f'caught {e}\\n')\n";
  std::vector<std::string> cmd = {"/usr/bin/python3", "-c", script};
  Result plain = run(cmd);
  ASSERT_TRUE(plain.exited(0)) << plain.describe();
  Result traced = record(file("py.data"), "*", cmd, {});
  EXPECT_TRUE(traced.exited(0)) << traced.describe();
  EXPECT_EQ(traced.out, plain.out);
  EXPECT_EQ(program_stderr(traced.err), plain.err) << traced.describe();
}

}  // namespace
}  // namespace atrace::it
