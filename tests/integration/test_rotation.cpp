// `record --rotate` (issue 33): a recording cut into a series of
// self-contained files, read back as one recording from its first file.
// target_c 20000 (20000 middle, 60000 leaf, 3 sleeper calls under one
// outer call that lasts the whole run, about 0.6 s) rotated every 100 ms:
// the series must give the counts of an unrotated recording, with outer
// one call spanning every file; each file reads alone; --rotate-keep
// keeps the newest files; --load puts every file into ClickHouse.
#include <filesystem>
#include <map>

#include "tests/integration/clickhouse_server.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kCmd = {Paths::target_c, "20000"};
constexpr const char* kSelect = "leaf,middle,outer,sleeper";
const std::map<std::string, long long> kCalls = {
    {"outer", 1}, {"middle", 20000}, {"leaf", 60000}, {"sleeper", 3}};

// Files of a series in `dir` whose name starts with `stem`.
std::vector<std::string> files_of(const std::string& dir, const std::string& stem) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind(stem, 0) == 0) out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

class Rotation : public IntegrationTest {
 protected:
  Result record_rotated(const std::string& out, const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"--filter=off", "--rotate=100ms"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<std::string> cmd = kCmd;
    cmd.push_back(tag_arg());
    return record(out, kSelect, cmd, args);
  }
};

TEST_F(Rotation, ASeriesReadsAsTheUnrotatedRecording) {
  const std::string plain = file("u.data");
  std::vector<std::string> cmd = kCmd;
  cmd.push_back(tag_arg());
  Result u = record(plain, kSelect, cmd, {"--filter=off"});
  ASSERT_TRUE(u.exited(0)) << u.describe();
  fs::create_directory(file("s"));
  const std::string first = file("s/r.data");
  Result r = record_rotated(first, {});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  const auto files = files_of(file("s"), "r.");
  ASSERT_GE(files.size(), 3u) << "the run lasts about 0.6 s: several 100 ms files";
  EXPECT_TRUE(fs::exists(file("s/r.1.data")));

  auto whole = report_json(first);
  auto unrotated = report_json(plain);
  ASSERT_TRUE(whole && unrotated);
  for (const auto& [name, n] : kCalls) {
    EXPECT_EQ(calls_of(*whole, name), n) << name;
    EXPECT_EQ(calls_of(*unrotated, name), n) << name;
    EXPECT_EQ(function_field(*whole, name, "unfinished"), 0) << name;
  }
  // outer began in the first file and returned in the last: one call, as
  // long as the whole run (its callees' time is inside it).
  EXPECT_GE(function_field(*whole, "outer", "total_ns"),
            function_field(*whole, "middle", "total_ns"));

  // Each file alone (under a name that is no series file's: a later
  // file by its own name reads the series from it on): readable, its own
  // part of the calls.
  long long leaf_rows = 0;
  for (size_t i = 0; i < files.size(); i++) {
    if (files[i] == first) continue;
    const std::string one = file("alone" + std::to_string(i) + ".data");
    fs::create_hard_link(files[i], one);
    auto part = report_json(one);
    ASSERT_TRUE(part) << files[i];
    if (const auto* leaf = find_function(*part, "leaf"))
      leaf_rows += (*leaf)["calls"].get<long long>();
  }
  EXPECT_GT(leaf_rows, 0);
  EXPECT_LE(leaf_rows, 60000);
}

TEST_F(Rotation, RotateKeepLeavesTheNewestFiles) {
  fs::create_directory(file("k"));
  Result r = record_rotated(file("k/k.data"), {"--rotate-keep=2"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  const auto files = files_of(file("k"), "k.");
  EXPECT_EQ(files.size(), 2u);
  EXPECT_NE(r.err.find("older files of the series deleted (--rotate-keep)"), std::string::npos)
      << r.err;
  for (const auto& f : files) EXPECT_TRUE(report_json(f)) << f;
}

TEST_F(Rotation, LoadPutsEveryFileIntoClickHouse) {
  fs::create_directories(file("ch"));
  ClickHouseServer server(file("ch"));
  ASSERT_TRUE(server.ok()) << server.log();
  fs::create_directory(file("l"));
  Result r = record_rotated(file("l/l.data"), {"--rotate-keep=0", "--load=" + server.url("rot")});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  // Every file loaded, then deleted.
  EXPECT_TRUE(files_of(file("l"), "l.").empty());
  const long long traces = std::stoll(server.value("SELECT count() FROM rot.traces"));
  EXPECT_GE(traces, 3);
  // Loaded file by file, a call open at a cut is a row of the file it
  // began in (ended trace_end) and its exit an orphan of the next: each
  // call is one row.
  for (const auto& [name, n] : kCalls)
    EXPECT_EQ(std::stoll(server.value("SELECT count() FROM rot.calls ANY INNER JOIN rot.functions "
                                      "USING (trace_id, function_id) WHERE name = '" +
                                      name + "'")),
              n)
        << name;
}

}  // namespace
}  // namespace atrace::it
