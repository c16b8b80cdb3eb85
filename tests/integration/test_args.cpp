// Function arguments and return values (issue 20), on the real kernel:
// target_args calls functions with known arguments of every type; the
// trace's script lines must show exactly those, strings that cannot be
// read must be recorded as such, and the traced program must print what it
// prints untraced.
#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <sstream>

#include "tests/integration/fixture.h"
#include "tests/integration/untraced_compare.h"

namespace atrace::it {
namespace {

constexpr const char* kSelect = "ar_*";
const std::string kArgs =
    "ar_signed@arg1/i8,arg2/i16,arg3/i32,arg4/i64,arg5/x32,arg6/u8;"
    "ar_unsigned@arg1/u8,arg2/u16,arg3/u32,arg4/u64;"
    "ar_pointer@arg1/p;"
    "ar_string@arg1/s,arg2/i32;"
    "ar_two_strings@arg1,arg2/s,arg3/s;"
    "ar_negative@arg1/i32;"
    "ar_clobber@arg1";
const std::string kRetval = "ar_signed;ar_negative/i32;ar_name/s;ar_clobber/u64;ar_string/i32";

// "FUNC(ARGS)" of each entry and "FUNC = VALUE" of each exit, in order,
// from `atrace script --fields=kind,details`.
std::vector<std::string> calls(const std::string& trace) {
  Result s = run({Paths::atrace, "script", "-i", trace, "--fields=kind,details"});
  EXPECT_TRUE(s.exited(0)) << s.describe();
  std::vector<std::string> out;
  std::istringstream lines(s.out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream in(line);
    std::string kind;
    in >> kind;
    std::string rest;
    std::getline(in, rest);
    size_t a = rest.find_first_not_of(' ');
    if (a == std::string::npos) continue;
    rest = rest.substr(a);
    if (kind == "entry:") out.push_back(rest);
    if (kind == "exit:") {
      // "ar_negative (1.20us) = -5": the duration varies, the value not.
      size_t open = rest.find(" ("), close = rest.find(')', open);
      if (open != std::string::npos && close != std::string::npos)
        rest = rest.substr(0, open) + rest.substr(close + 1);
      out.push_back(rest);
    }
  }
  return out;
}

class Args : public IntegrationTest {};

TEST_F(Args, ExactValuesOfEveryType) {
  std::string trace = file("a.data");
  ComparedRun r = run_untraced_and_traced({Paths::target_args, "2"}, trace,
                                          {"--select=" + std::string(kSelect), "--args=" + kArgs,
                                           "--retval=" + kRetval, "--no-kernel", "--filter=off"});
  EXPECT_TRUE(behaves_as_untraced(r)) << r.atrace_lines;
  ASSERT_TRUE(r.untraced.exited(0)) << r.untraced.describe();
  const std::string L(127, 'L');
  const std::vector<std::string> round = {
      "ar_signed(arg1=-128, arg2=-32768, arg3=-2147483648, arg4=-4611686018427387904, "
      "arg5=0xffffffff, arg6=127)",
      "ar_signed = -4611686020574904322",
      "ar_unsigned(arg1=255, arg2=65535, arg3=4294967295, arg4=18446744073709551615)",
      "ar_unsigned",
      "ar_pointer(arg1=0x1234)",
      "ar_pointer",
      "ar_pointer(arg1=0x0)",
      "ar_pointer",
      "ar_string(arg1=\"\", arg2=1)",
      "ar_string = 0",
      "ar_string(arg1=\"hello\", arg2=1)",
      "ar_string = 5",
      "ar_string(arg1=\"" + L + "\"..., arg2=1)",
      "ar_string = 300",
      "ar_string(arg1=\"\\xff\\xfea\\x80\", arg2=1)",
      "ar_string = 4",
      "ar_string(arg1=NULL, arg2=0)",
      "ar_string = -1",
      "ar_string(arg1=<unreadable 0x",  // the unmapped page's address: prefix only
      "ar_string = -1",
      "ar_two_strings(arg1=7, arg2=\"a\\\"b\", arg3=\"tab\\x09here\")",
      "ar_two_strings",
      "ar_negative(arg1=5)",
      "ar_negative = -5",
      "ar_negative(arg1=-7)",
      "ar_negative = 7",
      "ar_name",
      "ar_name = \"zero\"",
      "ar_name",
      "ar_name = \"one\"",
      "ar_clobber(arg1=41)",  // its probe would sit past `xor %edi,%edi` without --args
      "ar_clobber = 42",
  };
  auto got = calls(trace);
  ASSERT_EQ(got.size(), 2 * round.size()) << ::testing::PrintToString(got);
  for (size_t i = 0; i < got.size(); i++) {
    const std::string& want = round[i % round.size()];
    if (want.back() == 'x') EXPECT_EQ(got[i].substr(0, want.size()), want) << i;
    else EXPECT_EQ(got[i], want) << i;
  }
}

// Perf-event links (one per probe) pick the values programs as the
// uprobe_multi links do, and the default relevance filter changes nothing.
TEST_F(Args, PerfLinksAndTheDefaultFilterKeepTheValues) {
  std::string trace = file("p.data");
  Result r = record(trace, "ar_*", {Paths::target_args, "3", tag_arg()},
                    {"--args=ar_string@arg1/s,arg2;ar_clobber@arg1", "--retval=ar_name/s",
                     "--no-kernel", "--attach=perf"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  std::map<std::string, int> seen;
  for (const auto& c : calls(trace)) seen[c]++;
  EXPECT_EQ(seen["ar_string(arg1=\"hello\", arg2=1)"], 3);
  EXPECT_EQ(seen["ar_string(arg1=NULL, arg2=0)"], 3);
  EXPECT_EQ(seen["ar_clobber(arg1=41)"], 3);
  EXPECT_EQ(seen["ar_name = \"one\""], 3);
  EXPECT_EQ(seen["ar_negative"], 12);  // traced, no spec: 6 plain entries and exits
}

// --args, --retval and --stack name functions --select traces: a library's
// function by its name alone, without its module again (issue 31).
TEST_F(Args, ALibraryFunctionNeedsNoModuleAgain) {
  std::string trace = file("lib.data");
  Result r = record(
      trace, "libtarget_shared.so:shared_fn", {Paths::target_lib, "5", tag_arg()},
      {"--args=shared_fn@arg1/i32", "--retval=shared_fn/i32", "--no-kernel", "--filter=off"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  std::map<std::string, int> seen;
  for (const auto& c : calls(trace)) seen[c]++;
  for (int i = 0; i < 5; ++i) EXPECT_EQ(seen["shared_fn(arg1=" + std::to_string(i) + ")"], 1) << i;
}

// Without --args the same function's probe moves past the clobbering
// prefix (the case --args must avoid): `list` shows it.
TEST_F(Args, ClobberingPrefixWouldMoveTheProbe) {
  Result r = run({Paths::atrace, "list", Paths::target_args, "ar_clobber"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  EXPECT_NE(r.out.find("+5 "), std::string::npos) << r.out;
}

// A hit of a function with --args makes one decision, emit_func's, and
// its values record is written with its event: while the link group of the
// functions with values is rebuilt (a detach: new links, a generation
// switch, the old links closed; bpf/atrace.bpf.c, struct handover), a kept
// function seen by two links still gets its values once, and each call
// its own. target_generations: h00..h31 are called with 0, 1, 2, ... and
// each detached at --filter-max-calls=100 (32 rebuilds), while a second
// thread runs kept(n) without pause, 1 + i % 3 for its i-th call, each
// recursing down to kept(0) and returning r(n) = n * 2654435761 ^ r(n - 1).
TEST_F(Args, ValuesStayWithTheirCallsAcrossGenerationSwitches) {
  std::string trace = file("g.data");
  Result r =
      record(trace, "kept,h0*,h1*,h2*,h3*", {Paths::target_generations, "32", "200", tag_arg()},
             {"--args=kept,h*@arg1/u64", "--retval=kept/u64", "--no-kernel", "--filter=absolute",
              "--filter-max-calls=100", "--filter-keep=kept"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  Result s = run({Paths::atrace, "script", "-i", trace, "--fields=tid,kind,details"});
  ASSERT_TRUE(s.exited(0)) << s.describe();
  auto ret = [](uint64_t n) {
    uint64_t v = 0;
    for (uint64_t k = 1; k <= n; ++k) v = (k * 2654435761u) ^ v;
    return v;
  };
  std::map<std::string, std::vector<uint64_t>> stacks;  // by tid: kept's open args
  std::map<std::string, uint64_t> next_outer;           // by tid: the next outermost arg
  std::map<std::string, uint64_t> h_next;               // by function: the next arg
  long kept_entries = 0, kept_exits = 0, detaches = 0, without_value = 0, gaps = 0;
  std::istringstream lines(s.out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream in(line);
    std::string tid, kind, rest;
    in >> tid >> kind;
    std::getline(in, rest);
    rest = rest.substr(std::min(rest.size(), rest.find_first_not_of(' ')));
    if (kind == "detach:") ++detaches;
    // Events of the thread lost here (a ring full on a loaded machine): the
    // calls open across the gap end there, unfinished; start afresh.
    if (kind == "lost:") {
      ++gaps;
      stacks[tid].clear();
      next_outer.erase(tid);
      continue;
    }
    if (kind != "entry:" && kind != "exit:") continue;
    const std::string fn = rest.substr(0, rest.find_first_of(" ("));
    if (fn == "kept" && kind == "entry:") {
      ++kept_entries;
      uint64_t n = 0;
      auto& st = stacks[tid];
      if (rest == "kept") {  // its values record lost (checked below): the expected value
        ++without_value;
        n = !st.empty() ? st.back() - 1 : next_outer.count(tid) ? next_outer[tid] : 1;
      } else {
        ASSERT_EQ(std::sscanf(rest.c_str(), "kept(arg1=%lu)", &n), 1) << line;
      }
      if (!st.empty()) {
        ASSERT_EQ(n, st.back() - 1) << line;
      } else {
        if (next_outer.count(tid)) {
          ASSERT_EQ(n, next_outer[tid]) << "a call's values missing or repeated: " << line;
        }
        next_outer[tid] = n % 3 + 1;
      }
      st.push_back(n);
    } else if (fn == "kept") {
      ++kept_exits;
      auto& st = stacks[tid];
      if (st.empty()) continue;  // its entry was before a gap
      const size_t eq = rest.rfind(" = ");
      if (eq == std::string::npos) ++without_value;  // its record lost? (checked below)
      else EXPECT_EQ(rest.substr(eq + 3), std::to_string(ret(st.back()))) << line;
      st.pop_back();
    } else if (fn.size() == 3 && fn[0] == 'h' && kind == "entry:") {
      uint64_t x = 0;
      ASSERT_EQ(std::sscanf(rest.c_str() + 3, "(arg1=%lu)", &x), 1) << line;
      ASSERT_EQ(x, h_next[fn]++) << line;
    }
  }
  EXPECT_GT(kept_entries, 1000) << s.out.substr(0, 2000);
  if (!gaps) EXPECT_EQ(kept_entries, kept_exits);
  // An entry or exit without its value only where the recorder said
  // values records were lost (a ring full on a loaded machine: "..., N
  // values)"), never more of them than it said.
  if (without_value) {
    const size_t at = r.err.find(" values)");
    ASSERT_NE(at, std::string::npos) << without_value << " exits without a value, none said lost\n"
                                     << r.err;
    const size_t from = r.err.rfind(' ', at - 1) + 1;
    EXPECT_LE(without_value, std::stol(r.err.substr(from, at - from))) << r.err;
  }
  EXPECT_GE(detaches, 2) << "one rebuild only: no switch under load";
  EXPECT_EQ(h_next.size(), 32u);
  for (const auto& [fn, n] : h_next) EXPECT_EQ(n, 100u) << fn;
}

// An exit is recorded when its entry was, even after its function was
// turned off (relevance.h: a detached function closes the calls it had in
// flight); its return value must come with it, by the same decision.
// target_generations' kept recurses (entries 2, 3, 4 per call by turns), so
// --filter-max-calls=100 refuses entry 101 inside a call, whose exit comes
// after the switch-off. (Before the one decision, the values program
// skipped every hit of a function turned off, and that exit had none.)
TEST_F(Args, AnExitRecordedAfterTheSwitchOffHasItsValue) {
  std::string trace = file("m.data");
  Result r = record(trace, "kept,h00", {Paths::target_generations, "1", "200", tag_arg()},
                    {"--args=kept@arg1/u64", "--retval=kept/u64", "--no-kernel",
                     "--filter=absolute", "--filter-max-calls=100"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  long entries = 0, exits = 0, without = 0;
  for (const auto& c : calls(trace)) {
    if (c.rfind("kept(arg1=", 0) == 0) ++entries;
    if (c.rfind("kept", 0) == 0 && c.find('(') == std::string::npos) {
      ++exits;
      if (c.find(" = ") == std::string::npos) ++without;
    }
  }
  EXPECT_EQ(entries, 100);
  EXPECT_GT(exits, 0);
  EXPECT_EQ(without, 0) << exits << " exits of kept recorded";

  // And each recorded exit is its own call's: kept(n) returns
  // n * 2654435761 ^ kept(n - 1), so the value tells which activation
  // returned. The exits of the deeper activations whose entries max-calls
  // refused (the recursion went on while kept was off) must not close the
  // recorded calls around them (bpf/atrace.bpf.c: the entry's stack pointer).
  auto kept_of = [](unsigned long n) {
    unsigned long v = 0;
    for (unsigned long k = 1; k <= n; k++) v = (k * 2654435761u) ^ v;
    return v;
  };
  Result s = run({Paths::atrace, "script", "-i", trace, "--fields=tid,kind,details"});
  ASSERT_TRUE(s.exited(0)) << s.describe();
  std::map<std::string, std::vector<unsigned long>> open;  // tid -> arg1 of open kept calls
  std::istringstream lines(s.out);
  long checked = 0, wrong = 0;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream in(line);
    std::string tid, kind, name;
    in >> tid >> kind >> name;
    if (name.rfind("kept", 0) != 0) continue;
    if (kind == "entry:") {
      open[tid].push_back(std::stoul(name.substr(name.find('=') + 1)));
    } else if (kind == "exit:" && !open[tid].empty()) {
      const unsigned long n = open[tid].back();
      open[tid].pop_back();
      const size_t eq = line.find(" = ");
      ASSERT_NE(eq, std::string::npos) << line;
      ++checked;
      if (std::stoul(line.substr(eq + 3)) != kept_of(n)) {
        ++wrong;
        ADD_FAILURE() << "kept(" << n << ") returned " << kept_of(n) << ": " << line;
        if (wrong > 5) break;
      }
    }
  }
  EXPECT_EQ(checked, 100);
}

// A call an exception unwinds has no return value, and gets none of
// another call's: target_exceptions' thrower(x) returns x, or throws when
// x % 3 == 0 (caught 2 or 3 frames up). Every recorded exit of thrower
// must carry its own x, and only calls with x % 3 == 0 may lack an exit.
TEST_F(Args, UnwoundCallsHaveNoReturnValue) {
  std::string trace = file("x.data");
  ComparedRun r = run_untraced_and_traced({Paths::target_exceptions, "throw", "20"}, trace,
                                          {"--select=thrower", "--args=thrower@arg1/i32",
                                           "--retval=thrower/i32", "--no-kernel", "--filter=off"});
  EXPECT_TRUE(behaves_as_untraced(r)) << r.atrace_lines;
  ASSERT_TRUE(r.untraced.exited(0)) << r.untraced.describe();
  Result s = run({Paths::atrace, "script", "-i", trace, "--fields=tid,kind,details"});
  ASSERT_TRUE(s.exited(0)) << s.describe();
  std::map<std::string, std::optional<long>> open;  // tid -> x of its open thrower call
  long returned = 0, unwound = 0;
  std::istringstream lines(s.out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream in(line);
    std::string tid, kind, name;
    in >> tid >> kind >> name;
    if (name.rfind("thrower", 0) != 0) continue;
    std::optional<long>& x = open[tid];
    if (kind == "entry:") {
      if (x) {  // the previous call never returned: an exception went through it
        EXPECT_EQ(*x % 3, 0) << "thrower(" << *x << ") lost its exit";
        ++unwound;
      }
      x = std::stol(name.substr(name.find('=') + 1));
    } else if (kind == "exit:") {
      ASSERT_TRUE(x) << line;
      const size_t eq = line.find(" = ");
      ASSERT_NE(eq, std::string::npos) << line;
      EXPECT_EQ(std::stol(line.substr(eq + 3)), *x) << line;
      EXPECT_NE(*x % 3, 0) << "thrower(" << *x << ") threw, yet returned: " << line;
      ++returned;
      x.reset();
    }
  }
  for (const auto& [tid, x] : open) {
    if (!x) continue;
    EXPECT_EQ(*x % 3, 0) << "thrower(" << *x << ") lost its exit";
    ++unwound;
  }
  EXPECT_GT(returned, 0);
  EXPECT_GT(unwound, 0);
  // The program's own count of thrower's calls and returns.
  const std::string& out = r.untraced.out;
  EXPECT_NE(out.find("thrower calls=" + std::to_string(returned + unwound) +
                     " unwound=" + std::to_string(unwound)),
            std::string::npos)
      << out << " (returned " << returned << ", unwound " << unwound << ")";
}

TEST_F(Args, BadSpecsSayOneLine) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"--args=ar_string@arg1/q", "unknown type 'q'"},
      {"--args=ar_string@arg7", "'arg7' is not an argument register"},
      {"--args=ar_string", "is not SELECTOR@ARG"},
      {"--args=ar_string@arg1,", "empty argument"},
      {"--args=nothing_here@arg1", "matches no function --select traces"},
      {"--retval=ar_name/u7", "unknown type 'u7'"},
      {"--retval=ar_name/f32", "XMM registers, which uprobe programs cannot read"},
      {"--args=ar_string@arg1/d", "floating-point values ('d') cannot be recorded"},
      {"--retval=nothing_here", "matches no function --select traces"},
  };
  for (const auto& [opt, says] : bad) {
    Result r = run({Paths::atrace, "record", "-o", file("bad.data"), "--select=ar_*", opt,
                    "--no-kernel", "--", Paths::target_args, "1", tag_arg()});
    std::string line = expect_one_error_line(r);
    EXPECT_NE(line.find(says), std::string::npos) << opt << ": " << line;
  }
}

}  // namespace
}  // namespace atrace::it
