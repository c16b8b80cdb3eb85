// User call stacks at function entries (record --stack, issue 20), on the
// real kernel: target_stack calls st_leaf from three untraced callers a
// known number of times each; the stacks recorded at st_leaf's entries
// must name each caller exactly that often, in `script` and in
// `report --callers`, and the traced program must print what it prints
// untraced.
#include <map>
#include <sstream>

#include "tests/integration/fixture.h"
#include "tests/integration/untraced_compare.h"

namespace atrace::it {
namespace {

struct Entry {
  std::string details;              // "st_leaf(arg1=1)"
  std::vector<std::string> frames;  // "st_caller_a+0x12 (target_stack)"
};

// Each entry of `atrace script --fields=kind,details` with the frame lines
// that follow it ("\t<address> <frame>").
std::vector<Entry> entries(const std::string& trace) {
  Result s = run({Paths::atrace, "script", "-i", trace, "--fields=kind,details"});
  EXPECT_TRUE(s.exited(0)) << s.describe();
  std::vector<Entry> out;
  std::istringstream lines(s.out);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line[0] == '\t') {
      EXPECT_FALSE(out.empty()) << "a frame line before any entry: " << line;
      if (out.empty()) continue;
      std::istringstream in(line);
      std::string address, frame;
      in >> address;
      std::getline(in, frame);
      out.back().frames.push_back(frame.substr(frame.find_first_not_of(' ')));
      continue;
    }
    std::istringstream in(line);
    std::string kind, rest;
    in >> kind;
    std::getline(in, rest);
    if (kind == "entry:") out.push_back({rest.substr(rest.find_first_not_of(' ')), {}});
  }
  return out;
}

// "st_caller_a+0x12 (target_stack)" -> "st_caller_a"
std::string function_of(const std::string& frame) { return frame.substr(0, frame.find('+')); }

class Stacks : public IntegrationTest {};

TEST_F(Stacks, NameTheUntracedCallersExactly) {
  std::string trace = file("s.data");
  ComparedRun r = run_untraced_and_traced(
      {Paths::target_stack, "2"}, trace,
      {"--select=st_leaf", "--stack=st_leaf", "--no-kernel", "--filter=off"});
  EXPECT_TRUE(behaves_as_untraced(r)) << r.atrace_lines;
  ASSERT_TRUE(r.untraced.exited(0)) << r.untraced.describe();
  auto got = entries(trace);
  ASSERT_EQ(got.size(), 20u);
  std::map<std::string, int> callers;
  for (const auto& e : got) {
    ASSERT_GE(e.frames.size(), 3u) << e.details;
    EXPECT_EQ(e.frames[0], "st_leaf+0x0 (target_stack)");  // the probe at the first byte
    EXPECT_NE(e.frames[1].find(" (target_stack)"), std::string::npos) << e.frames[1];
    callers[function_of(e.frames[1])]++;
    EXPECT_EQ(function_of(e.frames[2]), "main") << e.frames[2];
  }
  EXPECT_EQ(callers, (std::map<std::string, int>{
                         {"st_caller_a", 4}, {"st_caller_b", 6}, {"st_caller_c", 10}}));
  // In the order main makes the calls, each round.
  for (size_t i = 0; i < got.size(); i++) {
    size_t k = i % 10;
    const char* want = k < 2 ? "st_caller_a" : k < 5 ? "st_caller_b" : "st_caller_c";
    EXPECT_EQ(function_of(got[i].frames[1]), want) << i;
  }
}

// report --callers: no traced caller, and the three callers from the
// stacks, said to come from them, with their exact counts.
TEST_F(Stacks, ReportCallersShowsUntracedCallers) {
  std::string trace = file("r.data");
  Result rec = record(trace, "st_leaf", {Paths::target_stack, "3", tag_arg()},
                      {"--stack=st_leaf", "--no-kernel", "--filter=off"});
  ASSERT_TRUE(rec.exited(0)) << rec.describe();
  Result rep = run({Paths::atrace, "report", "-i", trace, "--callers=st_leaf"});
  ASSERT_TRUE(rep.exited(0)) << rep.describe();
  EXPECT_NE(rep.out.find("(no traced caller)"), std::string::npos) << rep.out;
  EXPECT_NE(rep.out.find("From call stacks (30 of its 30 calls have one)"), std::string::npos)
      << rep.out;
  std::map<std::string, std::string> rows;  // caller -> "calls module traced"
  std::istringstream lines(rep.out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream in(line);
    std::string calls, caller, module, traced;
    in >> calls >> caller >> module;
    std::getline(in, traced);
    if (caller.rfind("st_caller_", 0) == 0) rows[caller] = calls + " " + module + traced;
  }
  EXPECT_EQ(rows,
            (std::map<std::string, std::string>{{"st_caller_a", "6 target_stack  no (stack)"},
                                                {"st_caller_b", "9 target_stack  no (stack)"},
                                                {"st_caller_c", "15 target_stack  no (stack)"}}))
      << rep.out;
  Result js = run({Paths::atrace, "report", "-i", trace, "--callers=st_leaf", "--format=json"});
  ASSERT_TRUE(js.exited(0)) << js.describe();
  EXPECT_NE(js.out.find("\"stack_callers\""), std::string::npos) << js.out;
  EXPECT_NE(js.out.find("\"short_name\": \"st_caller_c\""), std::string::npos) << js.out;
}

// A traced caller is one of the stack's callers too, said to be traced;
// --args on the same function, perf-event links and a depth of 2 (the
// function and its caller, exactly) change nothing else.
TEST_F(Stacks, WithArgsPerfLinksAndDepth) {
  std::string trace = file("d.data");
  Result rec = record(trace, "st_leaf,st_caller_b", {Paths::target_stack, "1", tag_arg()},
                      {"--stack=st_leaf", "--stack-depth=2", "--args=st_leaf@arg1", "--no-kernel",
                       "--filter=off", "--attach=perf"});
  ASSERT_TRUE(rec.exited(0)) << rec.describe();
  std::map<std::string, int> seen;
  for (const auto& e : entries(trace)) {
    if (e.details.rfind("st_caller_b", 0) == 0) {
      EXPECT_TRUE(e.frames.empty()) << "no --stack for st_caller_b";
      continue;
    }
    ASSERT_EQ(e.frames.size(), 2u) << e.details;
    seen[e.details + " <- " + function_of(e.frames[1])]++;
  }
  EXPECT_EQ(seen, (std::map<std::string, int>{{"st_leaf(arg1=1) <- st_caller_a", 2},
                                              {"st_leaf(arg1=10) <- st_caller_b", 3},
                                              {"st_leaf(arg1=100) <- st_caller_c", 5}}));
  Result rep = run({Paths::atrace, "report", "-i", trace, "--callers=st_leaf"});
  ASSERT_TRUE(rep.exited(0)) << rep.describe();
  EXPECT_NE(rep.out.find("target_stack  yes"), std::string::npos) << rep.out;
}

// The largest depth takes the larger record: the same callers.
TEST_F(Stacks, LargestDepth) {
  std::string trace = file("l.data");
  Result rec = record(trace, "st_leaf", {Paths::target_stack, "1", tag_arg()},
                      {"--stack=st_leaf", "--stack-depth=127", "--no-kernel", "--filter=off"});
  ASSERT_TRUE(rec.exited(0)) << rec.describe();
  std::map<std::string, int> callers;
  for (const auto& e : entries(trace)) {
    ASSERT_GE(e.frames.size(), 3u) << e.details;
    callers[function_of(e.frames[1])]++;
  }
  EXPECT_EQ(callers, (std::map<std::string, int>{
                         {"st_caller_a", 2}, {"st_caller_b", 3}, {"st_caller_c", 5}}));
}

TEST_F(Stacks, BadRequestsSayOneLine) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"--stack=st_leaf;nothing_here"},
       "--stack: 'nothing_here' matches no function --select traces"},
      {{"--stack=st_leaf", "--stack-depth=0"}, "--stack-depth: '0' is out of range"},
      {{"--stack=st_leaf", "--stack-depth=128"}, "--stack-depth: '128' is too large"},
      {{"--stack="}, "--stack: empty value"},
  };
  for (const auto& [opts, says] : bad) {
    std::vector<std::string> cmd = {Paths::atrace,    "record",           "-o",
                                    file("bad.data"), "--select=st_leaf", "--no-kernel"};
    cmd.insert(cmd.end(), opts.begin(), opts.end());
    for (std::string a : {"--", Paths::target_stack, "1"}) cmd.push_back(a);
    cmd.push_back(tag_arg());
    Result r = run(cmd);
    std::string line = expect_one_error_line(r);
    EXPECT_NE(line.find(says), std::string::npos) << opts.back() << ": " << line;
  }
}

}  // namespace
}  // namespace atrace::it
