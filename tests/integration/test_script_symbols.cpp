// `atrace script` names the code at a fault's ip (analysis/stack_frames.h, tools/frame_symbols.h):
// target_kernel's toucher() writes one byte to each of 1000 fresh pages,
// so at least 1000 faults have their ip in toucher itself.
#include <sstream>
#include <string>

#include "tests/integration/fixture.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

class ScriptSymbols : public IntegrationTest {};

TEST_F(ScriptSymbols, FaultIpNamesItsFunctionAndModule) {
  std::string trace = file("k.data");
  Result r = record(trace, "toucher", {Paths::target_kernel, tag_arg()});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  auto rep = report_json(trace);
  ASSERT_TRUE(rep);
  const long long self_faults = function_field(*rep, "toucher", "self_faults");
  ASSERT_GE(self_faults, 1000);

  Result s = run({Paths::atrace, "script", "-i", trace, "--function=toucher", "--kind=fault", "-F",
                  "details"});
  ASSERT_TRUE(s.exited(0)) << s.describe();
  long long named = 0, lines = 0;
  std::istringstream in(s.out);
  for (std::string l; std::getline(in, l);) {
    ++lines;
    if (l.find(" toucher+0x") != std::string::npos &&
        l.find("(target_kernel)") != std::string::npos)
      ++named;
  }
  EXPECT_GE(named, 1000) << s.out.substr(0, 2000);
  EXPECT_LE(named, self_faults);
  EXPECT_GE(lines, named);
}

}  // namespace
}  // namespace atrace::it
