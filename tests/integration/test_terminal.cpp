// Colour and the pager (tools/terminal.h): on a terminal (a pty from
// util-linux's `script`) report and script colour their output and page it
// through $PAGER; in a pipe neither, unless --color=always; NO_COLOR and
// --no-pager are honoured.
#include <string>

#include "tests/integration/fixture.h"

namespace atrace::it {
namespace {

const std::string kBold = "\x1b[1m";
const std::string kEscape = "\x1b[";

class Terminal : public IntegrationTest {
 protected:
  void SetUp() override {
    IntegrationTest::SetUp();
    if (IsSkipped()) return;
    trace_ = file("c.data");
    Result r = record(trace_, "leaf,middle,outer", {Paths::target_c, "5", tag_arg()});
    ASSERT_TRUE(r.exited(0)) << r.describe();
  }

  // `ENV atrace ARGS...` on a pseudo-terminal; what the terminal showed.
  // The terminal is a colour one whatever TERM the tests run under (a CI
  // job's TERM=dumb, or none), unless ENV says otherwise.
  Result on_terminal(const std::string& env, const std::string& args) {
    std::string cmd =
        "TERM=xterm-256color " + env + " " + Paths::atrace + " " + args + " -i " + trace_;
    return run({"script", "-qec", cmd, "/dev/null"});
  }

  std::string trace_;
};

// A pager that marks each line it shows.
const std::string kPager = "PAGER='sed s/^/PAGED:/'";

TEST_F(Terminal, ReportIsColouredAndPagedOnATerminalOnly) {
  Result tty = on_terminal(kPager, "report");
  ASSERT_TRUE(tty.exited(0)) << tty.describe();
  EXPECT_NE(tty.out.find("PAGED:Trace of"), std::string::npos) << tty.out;
  EXPECT_NE(tty.out.find(kBold + "Calls"), std::string::npos) << tty.out;

  Result plain = on_terminal(kPager + " NO_COLOR=1", "report --no-pager");
  ASSERT_TRUE(plain.exited(0)) << plain.describe();
  EXPECT_EQ(plain.out.find("PAGED:"), std::string::npos) << plain.out;
  EXPECT_EQ(plain.out.find(kEscape), std::string::npos) << plain.out;
  EXPECT_NE(plain.out.find("leaf"), std::string::npos) << plain.out;

  Result never = on_terminal(kPager, "report --color=never");
  EXPECT_EQ(never.out.find(kEscape), std::string::npos) << never.out;
  EXPECT_NE(never.out.find("PAGED:"), std::string::npos) << never.out;

  // In a pipe: neither, unless asked for colour.
  Result pipe = run({Paths::atrace, "report", "-i", trace_});
  ASSERT_TRUE(pipe.exited(0)) << pipe.describe();
  EXPECT_EQ(pipe.out.find(kEscape), std::string::npos) << pipe.out;
  Result always = run({Paths::atrace, "report", "-i", trace_, "--color=always"});
  EXPECT_NE(always.out.find(kBold + "Calls"), std::string::npos) << always.out;
  // JSON is for programs: never coloured.
  Result json = run({Paths::atrace, "report", "-i", trace_, "--format=json", "--color=always"});
  EXPECT_EQ(json.out.find(kEscape), std::string::npos) << json.out;
}

TEST_F(Terminal, ScriptColoursKindsAndPages) {
  Result tty = on_terminal(kPager, "script --kind=entry");
  ASSERT_TRUE(tty.exited(0)) << tty.describe();
  EXPECT_NE(tty.out.find("PAGED:"), std::string::npos) << tty.out;
  EXPECT_NE(tty.out.find("\x1b[32mentry:\x1b[0m"), std::string::npos) << tty.out;
  Result pipe = run({Paths::atrace, "script", "-i", trace_, "--kind=entry"});
  ASSERT_TRUE(pipe.exited(0)) << pipe.describe();
  EXPECT_EQ(pipe.out.find(kEscape), std::string::npos) << pipe.out;
  // Coloured or not, the same lines (the colour does not move the columns).
  Result always = run({Paths::atrace, "script", "-i", trace_, "--kind=entry", "--color=always"});
  std::string stripped;
  for (size_t i = 0; i < always.out.size(); ++i) {
    if (always.out[i] == '\x1b') {
      i = always.out.find('m', i);
      continue;
    }
    stripped += always.out[i];
  }
  EXPECT_EQ(stripped, pipe.out);
}

}  // namespace
}  // namespace atrace::it
