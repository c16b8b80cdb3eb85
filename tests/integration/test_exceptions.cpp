// Exception-safe return probes (issue 14, docs/exceptions.md): C++
// exceptions and forced unwinds (pthread_cancel, pthread_exit) through
// traced functions. The traced program must behave exactly as untraced
// (stdout, its own stderr, exit status), and the report must count every
// call, the unwound ones as `unwound`, against what target_exceptions says
// it did.
#include <unistd.h>

#include <sstream>

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
  std::optional<nlohmann::json> traced_like_untraced(const std::vector<std::string>& args,
                                                     const std::string& select,
                                                     const std::vector<std::string>& extra = {},
                                                     const char* program = Paths::target_exceptions) {
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
  auto rep = traced_like_untraced({"throw", "6"}, "thrower,mid,catch_top,deep,rethrower,outer_catch,"
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
  Result cp = run({"/usr/bin/objcopy", "--add-section", ".note.go.buildid=" + note,
                   Paths::target_c, go});
  ASSERT_TRUE(cp.exited(0)) << cp.describe();
  Result r = record(out, "*", {go, "3", tag_arg()});
  std::string line = expect_one_error_line(r);
  EXPECT_NE(line.find("Go program"), std::string::npos) << line;
  EXPECT_NE(access(out.c_str(), F_OK), 0) << "a trace file was left behind";
}

// Python exceptions are not C++ unwinds; the interpreter, all of its own
// functions traced, must still run the script exactly as untraced.
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
      "except KeyError as e: print('caught', e, file=sys.stderr)\n";
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
