// --args=FUNC@auto (issue 20), on the real kernel: target_dwarf's
// parameters named and typed from its debug information, with their exact
// values in script; a parameter in an XMM register left out with a note; a
// function without debug information refused in one line.
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/integration/fixture.h"
#include "tests/integration/untraced_compare.h"

namespace atrace::it {
namespace {

// The "entry:" details of `atrace script --fields=kind,details`, in order.
std::vector<std::string> entry_lines(const std::string& trace) {
  Result s = run({Paths::atrace, "script", "-i", trace, "--fields=kind,details"});
  EXPECT_TRUE(s.exited(0)) << s.describe();
  std::vector<std::string> out;
  std::istringstream lines(s.out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream in(line);
    std::string kind, rest;
    in >> kind;
    std::getline(in, rest);
    if (kind == "entry:") out.push_back(rest.substr(rest.find_first_not_of(' ')));
  }
  return out;
}

class DwarfArgs : public IntegrationTest {};

TEST_F(DwarfArgs, NamesAndTypesFromDebugInfo) {
  std::string trace = file("d.data");
  ComparedRun r =
      run_untraced_and_traced({Paths::target_dwarf, "2"}, trace,
                              {"--select=dw_mixed,dw_float", "--args=dw_mixed,dw_float@auto",
                               "--no-kernel", "--filter=off"});
  EXPECT_TRUE(behaves_as_untraced(r)) << r.atrace_lines;
  ASSERT_TRUE(r.untraced.exited(0)) << r.untraced.describe();
  EXPECT_NE(r.atrace_lines.find(
                "atrace: --args=dw_float@auto: ratio (double): in an XMM register; left out"),
            std::string::npos)
      << r.atrace_lines;
  const std::vector<std::string> round = {
      "dw_mixed(count=3, name=\"x\", delta=-2, flag=200, where=0x1234, big=-5000000000)",
      "dw_float(n=4)",
  };
  auto got = entry_lines(trace);
  ASSERT_EQ(got.size(), 2 * round.size()) << ::testing::PrintToString(got);
  for (size_t i = 0; i < got.size(); i++) EXPECT_EQ(got[i], round[i % round.size()]) << i;
  // --group-by takes the names @auto found (issue 31): "count" is arg1.
  Result by_name = run({Paths::atrace, "report", "-i", trace, "--group-by=count", "--format=json"});
  Result by_slot = run({Paths::atrace, "report", "-i", trace, "--group-by=arg1", "--format=json"});
  ASSERT_TRUE(by_name.exited(0)) << by_name.describe();
  ASSERT_TRUE(by_slot.exited(0)) << by_slot.describe();
  auto named = nlohmann::json::parse(by_name.out, nullptr, false);
  auto slotted = nlohmann::json::parse(by_slot.out, nullptr, false);
  ASSERT_FALSE(named.is_discarded());
  ASSERT_TRUE(named.contains("groups")) << by_name.out;
  EXPECT_EQ(named["groups"], slotted["groups"]) << by_name.out;
  EXPECT_NE(by_name.out.find("\"value\": \"3\""), std::string::npos) << by_name.out;
  Result unknown = run({Paths::atrace, "report", "-i", trace, "--group-by=nosuchname"});
  EXPECT_EQ(unknown.exit_code, 2) << unknown.describe();
  EXPECT_NE(unknown.err.find("an argument's name from --args=F@auto"), std::string::npos)
      << unknown.err;
}

TEST_F(DwarfArgs, WithoutDebugInfoSaysOneLine) {
  Result r =
      run({Paths::atrace, "record", "-o", file("bad.data"), "--select=dw_*",
           "--args=dw_nodebug@auto", "--no-kernel", "--", Paths::target_dwarf, "1", tag_arg()});
  std::string line = expect_one_error_line(r);
  EXPECT_NE(line.find("no debug information for dw_nodebug in target_dwarf"), std::string::npos)
      << line;
}

}  // namespace
}  // namespace atrace::it
