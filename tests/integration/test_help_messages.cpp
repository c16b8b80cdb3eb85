// What atrace says about its own command line (tools/cli.cpp,
// tools/cmd_convert.cpp): the version, help texts without parser notation,
// range errors in words, errors pointing to the subcommand's help, and
// convert's options refused for the formats that do not take them.
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/fixture.h"

namespace atrace::it {
namespace {

class HelpMessages : public IntegrationTest {};

TEST_F(HelpMessages, VersionNamesAtraceAndItsBuild) {
  for (const char* flag : {"--version", "-V"}) {
    Result r = run({Paths::atrace, flag});
    ASSERT_TRUE(r.exited(0)) << r.describe();
    EXPECT_TRUE(std::regex_match(
        r.out, std::regex(R"(atrace [0-9]+\.[0-9]+\.[0-9]+( \(git [0-9a-f]{12}(-dirty)?\))?\n)")))
        << r.out;
  }
}

// No CLI11 notation ("FLOAT:POSITIVE", "TEXT:{a,b}=x", "TEXT") in any help.
TEST_F(HelpMessages, HelpTextsHaveNoParserNoise) {
  for (const char* sub : {"", "record", "report", "script", "convert", "info", "list"}) {
    std::vector<std::string> argv = {Paths::atrace};
    if (*sub) argv.push_back(sub);
    argv.push_back("--help");
    Result r = run(argv);
    ASSERT_TRUE(r.exited(0)) << r.describe();
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("  -", 0) != 0) continue;  // option lines
      EXPECT_EQ(line.find("TEXT"), std::string::npos) << sub << ": " << line;
      EXPECT_EQ(line.find("FLOAT"), std::string::npos) << sub << ": " << line;
      EXPECT_EQ(line.find("POSITIVE"), std::string::npos) << sub << ": " << line;
      EXPECT_FALSE(std::regex_search(line, std::regex(R"([A-Z]:\{|[A-Z]=[a-z0-9])")))
          << sub << ": " << line;
    }
  }
}

TEST_F(HelpMessages, ErrorsSayWhatIsAcceptedAndWhereTheHelpIs) {
  struct Case {
    std::vector<std::string> args;
    std::string line;
  };
  const std::vector<Case> cases = {
      {{"report", "--tree", "--depth", "0"},
       "atrace: --depth: must be at least 1 (see atrace report --help)"},
      {{"report", "--tree", "--min-pct=101"},
       "atrace: --min-pct: must be from 0 to 100 (see atrace report --help)"},
      {{"convert", "--to=dot", "--min-pct=-1"},
       "atrace: --min-pct: must be from 0 to 100 (see atrace convert --help)"},
      {{"report", "--bogus"},
       "atrace: The following argument was not expected: --bogus (see atrace report --help)"},
      {{"bogus"}, "atrace: A subcommand is required (see atrace --help)"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> argv = {Paths::atrace};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    Result r = run(argv);
    EXPECT_TRUE(r.exited(2)) << r.describe();
    EXPECT_EQ(expect_one_error_line(r), c.line);
  }
}

// convert's table of options per format (docs/convert.md): an option a
// format does not take is an error before the trace is read; one it takes
// gets as far as reading the trace.
TEST_F(HelpMessages, ConvertOptionsThatDoNotApplyAreErrors) {
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"chrome", "--threads"}, {"folded", "--min-pct=3"},      {"csv", "--long-names"},
      {"dot", "--slice-args"}, {"perfetto", "--weight=calls"}, {"callgrind", "--threads"},
      {"paje", "--min-pct=1"},
  };
  const std::string missing = file("missing.data");
  for (const auto& [format, option] : refused) {
    Result r = run({Paths::atrace, "convert", "-i", missing, "--to=" + format, option});
    EXPECT_TRUE(r.exited(2)) << r.describe();
    std::string name = option.substr(0, option.find('='));
    EXPECT_EQ(expect_one_error_line(r).rfind(
                  "atrace: " + name + " does not apply to --to=" + format + " (only to ", 0),
              0u)
        << r.err;
  }
  const std::vector<std::pair<std::string, std::string>> taken = {
      {"folded", "--threads"},    {"folded", "--weight=calls"}, {"dot", "--min-pct=3"},
      {"chrome", "--slice-args"}, {"chrome", "--long-names"},
  };
  for (const auto& [format, option] : taken) {
    Result r = run({Paths::atrace, "convert", "-i", missing, "--to=" + format, option});
    EXPECT_TRUE(r.exited(1)) << r.describe();  // the missing trace, not the option
    EXPECT_NE(expect_one_error_line(r).find("missing.data"), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace atrace::it
