// One voice (base/diagnostics.h, tools/option_values.h): a selector's
// syntax error says what was expected, a number or a duration is worded
// one way whichever part of the command line checks it, each in one line.
#include "tests/integration/fixture.h"

namespace atrace::it {
namespace {

class OneVoice : public IntegrationTest {};

TEST_F(OneVoice, ListSyntaxErrorsSayWhatIsExpected) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"bad::[",
       "atrace: bad selector 'bad::[': '[' at 6 opens a set of characters that no ']' closes (a "
       "glob: *, ?, [abc])"},
      {"leaf(int",
       "atrace: bad selector 'leaf(int': a '(' that no ')' closes (a parameter list: f(int))"},
      {":leaf",
       "atrace: bad selector ':leaf': empty module before ':' (expected MODULE:FUNC, e.g. "
       "libc.so.6:malloc)"},
      {"re:",
       "atrace: bad selector 're:': empty regular expression after 're:' (expected re:REGEX, "
       "e.g. re:^parse_)"},
  };
  for (const auto& [pattern, line] : cases) {
    Result r = run({Paths::atrace, "list", Paths::target_c, pattern});
    EXPECT_EQ(expect_one_error_line(r), line) << r.describe();
    EXPECT_EQ(r.exit_code, 1) << r.describe();
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

TEST_F(OneVoice, NumbersAndDurationsAreWordedOneWay) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      // CLI11's int options, which said "Could not convert: --pid = 1,2".
      {{"list", "-p", "1,2"},
       "atrace: --pid: '1,2' is not a whole number (from 0 to 2147483647) (see atrace list "
       "--help)"},
      {{"record", "--duration=2h", "--", Paths::target_c},
       "atrace: --duration: '2h' is not a duration (a number of ns, us, ms or s, seconds without "
       "a unit, above 0 up to 31536000s)"},
      {{"record", "--filter-threshold=fast", "--", Paths::target_c},
       "atrace: --filter-threshold: 'fast' is not a duration (a number of ns, us, ms or s, "
       "nanoseconds without a unit)"},
      {{"top", "--interval=50ms", "--", Paths::target_c},
       "atrace: --interval: '50ms' is out of range (a number of ns, us, ms or s, seconds without "
       "a unit, from 100ms up to 3600s)"},
      {{"report", "-i", "missing.data", "--time=1x"},
       "atrace: --time: '1x' is not a duration (a number of ns, us, ms or s, seconds without a "
       "unit)"},
  };
  for (const auto& [args, line] : cases) {
    std::vector<std::string> argv = {Paths::atrace};
    argv.insert(argv.end(), args.begin(), args.end());
    Result r = run(argv);
    EXPECT_EQ(expect_one_error_line(r), line) << r.describe();
    EXPECT_EQ(r.exit_code, 2) << r.describe();
    EXPECT_EQ(r.out.find("leaf="), std::string::npos) << "the target must not run";
  }
}

}  // namespace
}  // namespace atrace::it
