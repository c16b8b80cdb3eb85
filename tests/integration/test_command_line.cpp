// Bad values on record's command line (tools/option_values.h): one line
// naming the option, a non-zero exit, the target never started, at once
// (a --buffer-size that overflowed used to spin forever: the run's timeout
// turns that into a failure).
#include "tests/integration/fixture.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

class CommandLine : public IntegrationTest {};

TEST_F(CommandLine, BadValuesAreOneLineNamingTheOption) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--buffer-size=-1", "--buffer-size"},
      {"--buffer-size=9223372036854775809", "--buffer-size"},
      {"--buffer-size=18446744073709551616", "--buffer-size"},
      {"--buffer-size=2G", "--buffer-size"},
      {"--buffer-size=8Q", "--buffer-size"},
      {"--duration=nan", "--duration"},
      {"--duration=0", "--duration"},
      {"--duration=-1", "--duration"},
      {"--filter-budget=nan", "--filter-budget"},
      {"--filter-budget=101", "--filter-budget"},
      {"--filter-min-calls=-5", "--filter-min-calls"},
      {"--filter-max-calls=-1", "--filter-max-calls"},
      {"--select=", "--select"},
      {"--exclude=", "--exclude"},
      {"--filter-keep=", "--filter-keep"},
  };
  for (const auto& [arg, option] : cases) {
    SCOPED_TRACE(arg);
    Result r = run(
        {Paths::atrace, "record", "-o", file("x.data"), arg, "--", Paths::target_c, "1", tag_arg()},
        milliseconds(20000));
    std::string line = expect_one_error_line(r);
    EXPECT_NE(line.find(option), std::string::npos) << line;
    EXPECT_LT(line.size(), 200u) << "one short line: " << line;
    EXPECT_EQ(r.out.find("leaf="), std::string::npos) << "the target must not run";
  }
}

TEST_F(CommandLine, PidZeroAndEmptyOutputAreNamed) {
  Result p = run({Paths::atrace, "record", "-o", file("x.data"), "--select=tick", "-p", "0"});
  EXPECT_NE(expect_one_error_line(p).find("'0' is not a process id"), std::string::npos);
  Result o = run(
      {Paths::atrace, "record", "-o", "", "--select=leaf", "--", Paths::target_c, "1", tag_arg()});
  EXPECT_NE(expect_one_error_line(o).find("-o needs a file name"), std::string::npos);
}

// A regex over a very long symbol: std::regex recursed per character and
// crashed; the selector now runs in linear time (RE2).
TEST_F(CommandLine, RegexSelectorOnALongNameDoesNotCrash) {
  Result r = record(file("re.data"), "re:^(l|e|a|f)+$", {Paths::target_c, "2", tag_arg()});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  auto rep = report_json(file("re.data"));
  ASSERT_TRUE(rep);
  EXPECT_EQ(calls_of(*rep, "leaf"), 6);
}

}  // namespace
}  // namespace atrace::it
