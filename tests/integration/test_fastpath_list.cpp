// `atrace list --fast-path` (issue 35): for each function a selector
// matches, whether `record --fast-path` can patch it and, when not, why:
// the rule the recording applies (fast_path_refusal()), on target_placement,
// whose functions' shapes are known (tests/targets/target_placement.c), and
// on libc's vfork, refused by name.
#include <map>
#include <sstream>

#include "tests/integration/fixture.h"

namespace atrace::it {
namespace {

struct Verdict {
  std::string fast;    // FAST: "patch" or "no"
  std::string reason;  // after the name: "(fast path: ...)"
};

// "PLACE(2 words) ADDRESS SIZE PROBES FAST MODULE FUNCTION [(fast path: ...)]"
std::map<std::string, Verdict> verdicts(const std::string& out) {
  std::map<std::string, Verdict> all;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string delta, path, addr, size, probes, fast, module, name;
    if (!(words >> delta >> path >> addr >> size >> probes >> fast >> module >> name)) continue;
    if (delta.empty() || delta[0] != '+') continue;
    Verdict v{fast, ""};
    auto at = line.find("(fast path: ");
    if (at != std::string::npos) v.reason = line.substr(at + 12, line.rfind(')') - at - 12);
    all[name] = v;
  }
  return all;
}

class FastPathList : public IntegrationTest {};

TEST_F(FastPathList, SaysWhichFunctionsCanBePatchedAndWhyNot) {
  Result r = run(
      {Paths::atrace, "list", "--fast-path", Paths::target_placement, "pl_*,c_*,libc.so.6:vfork"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  auto v = verdicts(r.out);
  ASSERT_EQ(v.size(), 14u) << r.out;
  // A jcc at +12 loops back to +2, inside the jump's 5 bytes.
  EXPECT_EQ(v["pl_loop_into_prefix"].fast, "no");
  EXPECT_EQ(v["pl_loop_into_prefix"].reason,
            "the instruction at +12 branches into the replaced bytes (+2)");
  // pl_side_door jumps into pl_shared_tail's first bytes.
  EXPECT_EQ(v["pl_shared_tail"].fast, "no");
  EXPECT_EQ(v["pl_shared_tail"].reason,
            "a branch or code address of the module lands inside the replaced bytes");
  EXPECT_EQ(v["vfork"].fast, "no");
  EXPECT_EQ(v["vfork"].reason, "returns twice: its second return would find no shadow frame");
  // Every other shape is relocated: endbr64, push, a write to the red zone,
  // a loop back to +0, a relative jmp among the first bytes (pl_side_door),
  // an indirect jump after them.
  size_t patch = 0;
  for (const auto& [name, verdict] : v) {
    if (name == "pl_loop_into_prefix" || name == "pl_shared_tail" || name == "vfork") continue;
    EXPECT_EQ(verdict.fast, "patch") << name << ": " << verdict.reason;
    EXPECT_EQ(verdict.reason, "") << name;
    patch += verdict.fast == "patch";
  }
  EXPECT_EQ(patch, 11u);
  EXPECT_NE(r.out.find("fast path (record --fast-path): 11 of 14 functions can be patched"),
            std::string::npos)
      << r.out;

  // Without --fast-path the table is as before: no FAST column.
  Result plain = run({Paths::atrace, "list", Paths::target_placement, "pl_*,c_*"});
  ASSERT_TRUE(plain.exited(0)) << plain.describe();
  EXPECT_EQ(plain.out.find("FAST"), std::string::npos) << plain.out;
  EXPECT_EQ(plain.out.find("fast path"), std::string::npos) << plain.out;
}

}  // namespace
}  // namespace atrace::it
