// speedscope's own importer (the pinned npm package, run in Node by
// speedscope_import.js) reads atrace's Chrome JSON and folded files of
// target_c, whose call tree is known: one frame per traced function, with
// the calls and weights the trace has, and no recorded values in frame
// names (speedscope folds a Chrome event's args into its name).
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "tests/integration/convert_util.h"
#include "tests/integration/fixture.h"

namespace atrace::it {
namespace {

class Speedscope : public IntegrationTest {
 protected:
  void SetUp() override {
    IntegrationTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    REQUIRE_TOOL("node");
    REQUIRE_TOOL("npm");
    ASSERT_TRUE(installed()) << "speedscope " << SPEEDSCOPE_VERSION << " could not be installed";
  }

  // npm installs the pinned version into the build tree once.
  static bool installed() {
    const std::string package = std::string(SPEEDSCOPE_DIR) + "/node_modules/speedscope";
    auto version = [&] {
      std::ifstream in(package + "/package.json");
      if (!in) return std::string();
      return nlohmann::json::parse(in, nullptr, false).value("version", "");
    };
    if (version() == SPEEDSCOPE_VERSION) return true;
    Result r = run({"npm", "install", "--prefix", SPEEDSCOPE_DIR, "--no-save", "--no-audit",
                    "--no-fund", std::string("speedscope@") + SPEEDSCOPE_VERSION},
                   milliseconds(300000));
    EXPECT_TRUE(r.exited(0)) << r.describe();
    return version() == SPEEDSCOPE_VERSION;
  }

  // What the importer made of each file, by file.
  std::map<std::string, nlohmann::json> import(const std::vector<std::string>& files) {
    std::vector<std::string> argv = {"node", SPEEDSCOPE_IMPORT_JS,
                                     std::string(SPEEDSCOPE_DIR) + "/node_modules/speedscope"};
    argv.insert(argv.end(), files.begin(), files.end());
    Result r = run(argv);
    EXPECT_TRUE(r.exited(0)) << r.describe();
    std::map<std::string, nlohmann::json> out;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
      auto j = nlohmann::json::parse(line, nullptr, false);
      if (!j.is_discarded()) out[j["file"]] = j;
    }
    return out;
  }
};

const std::map<std::string, long long> kCalls = {
    {"leaf", 300}, {"middle", 100}, {"outer", 1}, {"sleeper", 3}};

TEST_F(Speedscope, ImportsChromeJsonAndFoldedWithTheRightFrames) {
  const std::string data = file("c.data"), chrome = file("c.json"), folded = file("c.folded");
  Result r = record(data, "leaf,middle,outer,sleeper", {Paths::target_c, "100", tag_arg()},
                    {"--no-kernel", "--filter=off"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  ASSERT_TRUE(convert(data, "chrome", chrome));
  ASSERT_TRUE(convert(data, "folded", folded));
  auto got = import({chrome, folded});
  ASSERT_EQ(got.size(), 2u);

  // Chrome JSON: one profile (one thread), a frame per function, each
  // call one call of the importer's tree.
  const nlohmann::json& c = got[chrome];
  ASSERT_TRUE(c["recognized"]) << c;
  ASSERT_EQ(c["profiles"].size(), 1u) << c;
  const nlohmann::json& cp = c["profiles"][0];
  EXPECT_EQ(cp["unit"], "microseconds");
  ASSERT_EQ(cp["frames"].size(), kCalls.size()) << cp["frames"];
  for (const auto& [fn, calls] : kCalls) EXPECT_EQ(cp["frames"][fn]["calls"], calls) << fn;

  // Folded: the same frames, and each stack's weight is its line's.
  const nlohmann::json& f = got[folded];
  ASSERT_TRUE(f["recognized"]) << f;
  ASSERT_EQ(f["profiles"].size(), 1u);
  const nlohmann::json& fp = f["profiles"][0];
  ASSERT_EQ(fp["frames"].size(), kCalls.size()) << fp["frames"];
  std::ifstream in(folded);
  long long sum = 0;
  for (std::string line; std::getline(in, line);) {
    const size_t space = line.rfind(' ');
    const std::string stack = line.substr(0, space);
    const long long weight = std::stoll(line.substr(space + 1));
    sum += weight;
    // Each function is the leaf of one line here: its self weight.
    const std::string leaf = stack.substr(stack.rfind(';') + 1);
    EXPECT_EQ(fp["frames"][leaf]["self"].get<long long>(), weight) << line;
  }
  EXPECT_EQ(fp["total"].get<long long>(), sum);
  // Both files say the same: Chrome's microseconds are the folded nanoseconds.
  for (const auto& [fn, calls] : kCalls)
    EXPECT_NEAR(cp["frames"][fn]["total"].get<double>() * 1000,
                fp["frames"][fn]["total"].get<double>(), 1000.0 * calls)
        << fn;
}

// With kernel events (the default) speedscope gets their frames too, but
// never a frame per recorded value, and the functions' calls stay exact.
TEST_F(Speedscope, KernelEventsKeepTheirValuesOutOfFrameNames) {
  const std::string data = file("k.data"), chrome = file("k.json");
  Result r = record(data, "leaf,middle,outer,sleeper", {Paths::target_c, "100", tag_arg()},
                    {"--kernel=+syscalls", "--filter=off"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  ASSERT_TRUE(convert(data, "chrome", chrome));
  auto got = import({chrome});
  const nlohmann::json& c = got[chrome];
  ASSERT_TRUE(c["recognized"]) << c;
  std::set<std::string> names;
  for (const auto& p : c["profiles"])
    for (const auto& [name, frame] : p["frames"].items()) names.insert(name);
  for (const auto& name : names) EXPECT_EQ(name.find('{'), std::string::npos) << name;
  const nlohmann::json& frames = c["profiles"][0]["frames"];
  for (const auto& [fn, calls] : kCalls) EXPECT_EQ(frames[fn]["calls"], calls) << fn;
  EXPECT_GT(names.size(), kCalls.size()) << "no kernel frame";
}

}  // namespace
}  // namespace atrace::it
