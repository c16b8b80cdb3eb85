// atrace list: what a selector would probe, with each probe's kernel path,
// before anything is attached.
#include "tests/integration/fixture.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

TEST(List, NamesEveryMatchedFunctionWithItsProbePath) {
  Result r = run({Paths::atrace, "list", Paths::target_cpp, "ns::*"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  for (const char* fn : {"ns::Widget::poke(int)", "ns::early_init()", "ns::add<int>(int, int)",
                         "ns::add<double>(double, double)"}) {
    auto pos = r.out.find(fn);
    ASSERT_NE(pos, std::string::npos) << fn << "\n" << r.out;
    std::string line = r.out.substr(r.out.rfind('\n', pos) + 1, pos - r.out.rfind('\n', pos) - 1);
    // "+N PATH": where the probe sits in the function, and its kernel path.
    EXPECT_TRUE(line.rfind("+", 0) == 0 && (line.find(" single-step ") != std::string::npos ||
                                            line.find(" emulated ") != std::string::npos ||
                                            line.find(" nop5 ") != std::string::npos))
        << "no probe place on: " << line;
  }
  EXPECT_NE(r.out.find("4 functions:"), std::string::npos) << r.out;
}

TEST(List, SharedLibrariesOfALaunchableBinary) {
  Result r = run({Paths::atrace, "list", Paths::target_lib, "libtarget_shared.so:shared_*"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  EXPECT_NE(r.out.find("shared_fn"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("libtarget_shared.so"), std::string::npos) << r.out;
}

TEST(List, SelectorMatchingNothingIsOneError) {
  Result r = run({Paths::atrace, "list", Paths::target_c, "no_such_function_xyz"});
  std::string line = expect_one_error_line(r);
  EXPECT_NE(line.find("no_such_function_xyz"), std::string::npos) << line;
}

}  // namespace
}  // namespace atrace::it
