// Symbols where distributions keep them (uprobes/debug_symbols.h): a
// stripped program is selected, listed and traced by the symbols of its
// separate debug file (.gnu_debuglink) or of its MiniDebugInfo
// (.gnu_debugdata), with exact counts; with none, the error names where the
// debug file would be and the libraries that can be selected instead.
#include <gtest/gtest.h>

#include <string>

#include "tests/integration/fixture.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

class SeparateSymbols : public IntegrationTest, public ::testing::WithParamInterface<const char*> {
 protected:
  std::string program() const {
    return std::string(Paths::stripped) + "/" + GetParam() + "/target_c";
  }
};

// target_c N: outer() once, middle() N times (target_c.c).
TEST_P(SeparateSymbols, StrippedProgramIsTracedByItsKeptSymbols) {
  Result list = run({Paths::atrace, "list", program(), "middle"});
  ASSERT_TRUE(list.exited(0)) << list.describe();
  EXPECT_NE(list.out.find("middle"), std::string::npos) << list.out;
  const std::string out = file("s.data");
  Result r = record(out, "leaf,middle,outer", {program(), "100", tag_arg()},
                    {"--filter-min-calls=1000", "--no-kernel"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  auto rep = report_json(out);
  ASSERT_TRUE(rep);
  EXPECT_EQ(calls_of(*rep, "middle"), 100);
  EXPECT_EQ(calls_of(*rep, "outer"), 1);
}

INSTANTIATE_TEST_SUITE_P(Kept, SeparateSymbols, ::testing::Values("debuglink", "mini"));

// Nothing kept: one line that says where the debug file would be and
// which libraries have symbols.
class StrippedProgram : public IntegrationTest {};

TEST_F(StrippedProgram, WithoutSymbolsSaysWhatNext) {
  const std::string bare = std::string(Paths::stripped) + "/bare/target_c";
  Result r = run({Paths::atrace, "list", bare});
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  const std::string line = expect_one_error_line(r);
  EXPECT_NE(line.find("no function symbols: stripped, and no debug file at /usr/lib/debug/"
                      ".build-id/"),
            std::string::npos)
      << line;
  EXPECT_NE(line.find("its libraries have symbols, selected as LIBRARY:PATTERN ('libc.so.6:*'): "
                      "libc.so.6"),
            std::string::npos)
      << line;
}

}  // namespace
}  // namespace atrace::it
