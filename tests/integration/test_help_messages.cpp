// What atrace says about its own command line (tools/cli.cpp,
// tools/cmd_convert.cpp): the version, help texts without parser notation,
// range errors in words, errors pointing to the subcommand's help, and
// convert's options refused for the formats that do not take them.
#include <sys/utsname.h>

#include <cstdio>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/fixture.h"

namespace atrace::it {
namespace {

class HelpMessages : public IntegrationTest {};

// The version line, then the running kernel's features as `info --kernel`
// prints them (one detection for both): on this kernel, as root, each one
// known, and those whose kernel version is known present.
TEST_F(HelpMessages, VersionNamesAtraceItsBuildAndTheKernelsFeatures) {
  Result info = run({Paths::atrace, "info", "--kernel"});
  ASSERT_TRUE(info.exited(0)) << info.describe();
  struct utsname u {};
  ASSERT_EQ(uname(&u), 0);
  EXPECT_EQ(info.out.rfind(std::string("Kernel ") + u.release + ":\n", 0), 0u) << info.out;
  for (const char* flag : {"--version", "-V"}) {
    Result r = run({Paths::atrace, flag});
    ASSERT_TRUE(r.exited(0)) << r.describe();
    const size_t nl = r.out.find('\n');
    ASSERT_NE(nl, std::string::npos) << r.out;
    EXPECT_TRUE(std::regex_match(
        r.out.substr(0, nl),
        std::regex(R"(atrace [0-9]+\.[0-9]+\.[0-9]+( \(git [0-9a-f]{12}(-dirty)?\))?)")))
        << r.out;
    EXPECT_EQ(r.out.substr(nl + 1), info.out);
  }
  EXPECT_EQ(info.out.find("unknown"), std::string::npos) << info.out;
  for (const char* required : {"BTF", "uprobe PMU", "BPF ring buffer", "BPF cookies",
                               "task storage", "tp_btf tracepoints"})
    EXPECT_NE(info.out.find(std::string("  ") + required + " (required): yes\n"), std::string::npos)
        << required << "\n"
        << info.out;
  unsigned major = 0, minor = 0;
  ASSERT_EQ(std::sscanf(u.release, "%u.%u", &major, &minor), 2);
  auto since = [&](unsigned a, unsigned b) { return major != a ? major > a : minor >= b; };
  const std::pair<const char*, bool> optional[] = {{"uprobe_multi links", since(6, 6)},
                                                   {"uretprobe syscall", since(6, 11)},
                                                   {"NOP5 optimization", since(6, 18)}};
  for (const auto& [name, present] : optional) {
    if (!present) continue;
    EXPECT_NE(info.out.find(std::string("  ") + name + ": yes\n"), std::string::npos)
        << name << "\n"
        << info.out;
  }
}

// No CLI11 notation ("FLOAT:POSITIVE", "TEXT:{a,b}=x", "TEXT") in any help.
TEST_F(HelpMessages, HelpTextsHaveNoParserNoise) {
  for (const char* sub : {"", "record", "top", "report", "script", "convert", "info", "list"}) {
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
       "atrace: --depth: '0' is out of range (a number of at least 1) (see atrace report --help)"},
      {{"report", "--tree", "--min-pct=101"},
       "atrace: --min-pct: '101' is out of range (a number from 0 to 100) (see atrace report "
       "--help)"},
      {{"convert", "--to=dot", "--min-pct=-1"},
       "atrace: --min-pct: '-1' is out of range (a number from 0 to 100) (see atrace convert "
       "--help)"},
      {{"report", "--bogus"},
       "atrace: The following argument was not expected: --bogus (see atrace report --help)"},
      {{"bogus"},
       "atrace: unknown subcommand 'bogus' (subcommands: record, top, report, script, convert, "
       "info, merge, list)"},
      {{"reprot", "-i", "x"},
       "atrace: unknown subcommand 'reprot': did you mean 'report'? (subcommands: record, top, "
       "report, script, convert, info, merge, list)"},
      {{"lsit"},
       "atrace: unknown subcommand 'lsit': did you mean 'list'? (subcommands: record, top, "
       "report, script, convert, info, merge, list)"},
      {{}, "atrace: A subcommand is required (see atrace --help)"},
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
