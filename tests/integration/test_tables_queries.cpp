// The shipped queries of docs/sql/ on a real ClickHouse, each answer
// compared with what `atrace report` prints for the same trace: target_c
// (exact counts: outer 1 -> middle 200 -> leaf 600, sleeper 3 sleeping 20
// ms each) recorded with kernel events, and a merged trace of two
// recordings of it (200 and 50) for the per-host queries. (Tables.* checks
// top_functions_self.sql and call_latency_percentiles.sql.) The same
// queries on DuckDB (tools/duckdb/atrace_duckdb.cjs over `--to=tables`'s
// files, @duckdb/node-api installed from the npm registry) give
// ClickHouse's answers, row for row.
#include <filesystem>
#include <fstream>
#include <map>

#include "tests/integration/clickhouse_server.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

class TablesQueries : public IntegrationTest {
 protected:
  Result load(const std::string& trace, const std::string& url) {
    return run({Paths::atrace, "convert", "-i", trace, "--to=clickhouse", "-o", url});
  }
};

TEST_F(TablesQueries, AnswersEqualTheReport) {
  REQUIRE_CLICKHOUSE();
  const std::string c = file("c.data"), a = file("a.data"), b = file("b.data"),
                    merged = file("m.data");
  Result r = record(c, "leaf,middle,outer,sleeper", {Paths::target_c, "200", tag_arg()},
                    {"--filter=off", "--kernel=sched,syscalls,faults"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  r = record(a, "leaf,middle,outer", {Paths::target_c, "200", tag_arg()}, {"--filter=off"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  r = record(b, "leaf,middle,outer", {Paths::target_c, "50", tag_arg()}, {"--filter=off"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  r = run({Paths::atrace, "merge", "-o", merged, a, b});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  auto rep = report_json(c);
  ASSERT_TRUE(rep);
  ASSERT_EQ(calls_of(*rep, "leaf"), 600);

  std::filesystem::create_directories(file("ch"));
  ClickHouseServer server(file("ch"));
  ASSERT_TRUE(server.ok()) << server.log();
  Result loaded = load(c, server.url("atrace"));
  ASSERT_TRUE(loaded.exited(0)) << loaded.describe();

  {
    SCOPED_TRACE("kernel_time_per_function.sql");
    auto rows = server.rows(shipped_query("kernel_time_per_function.sql"));
    ASSERT_EQ(rows.size(), (*rep)["functions"].size());
    const char* fields[] = {"calls",         "offcpu_ns",       "self_offcpu_ns",
                            "syscall_ns",    "self_syscall_ns", "syscalls",
                            "self_syscalls", "faults",          "self_faults"};
    for (const auto& row : rows) {
      ASSERT_EQ(row.size(), 11u);
      SCOPED_TRACE(row[0]);
      for (size_t i = 0; i < std::size(fields); ++i)
        EXPECT_EQ(std::stoll(row[2 + i]), function_field(*rep, row[0], fields[i])) << fields[i];
    }
    // The three 20 ms sleeps: off-CPU and in nanosleep, in sleeper itself.
    EXPECT_EQ(function_field(*rep, "sleeper", "self_syscalls"), 3);
    EXPECT_GE(function_field(*rep, "sleeper", "self_offcpu_ns"), 60000000);
    EXPECT_EQ(rows[0][0], "sleeper") << "by off-CPU time";
  }
  {
    SCOPED_TRACE("top_functions_per_process.sql");
    auto rows = server.rows(shipped_query("top_functions_per_process.sql"));
    ASSERT_EQ(rows.size(), (*rep)["functions"].size()) << "one process";
    auto per_pid = report_json(c, {"--pid=" + rows[0][1]});
    ASSERT_TRUE(per_pid);
    long long last_total = -1;
    for (const auto& row : rows) {
      ASSERT_EQ(row.size(), 7u);
      SCOPED_TRACE(row[2]);
      EXPECT_EQ(row[0], "0");
      EXPECT_EQ(row[1], std::to_string((*rep)["pid"].get<long long>()));
      EXPECT_EQ(std::stoll(row[4]), function_field(*per_pid, row[2], "calls"));
      EXPECT_EQ(std::stoll(row[5]), function_field(*per_pid, row[2], "self_ns"));
      EXPECT_EQ(std::stoll(row[6]), function_field(*per_pid, row[2], "total_ns"));
      if (last_total >= 0) {
        EXPECT_LE(std::stoll(row[6]), last_total) << "by total time";
      }
      last_total = std::stoll(row[6]);
    }
  }
  {
    SCOPED_TRACE("slowest_calls.sql");
    auto rows = server.rows(shipped_query("slowest_calls.sql"));
    ASSERT_EQ(rows.size(), 20u);
    // Who calls whom in target_c; the slowest call of each function first
    // seen is report's max_ns.
    const std::map<std::string, std::string> caller = {
        {"outer", ""}, {"middle", "outer"}, {"leaf", "middle"}, {"sleeper", ""}};
    std::map<std::string, bool> seen;
    long long last = -1;
    for (const auto& row : rows) {
      ASSERT_EQ(row.size(), 9u);
      SCOPED_TRACE(row[5]);
      ASSERT_TRUE(caller.count(row[5]));
      EXPECT_EQ(row[6], caller.at(row[5]));
      EXPECT_EQ(row[7], row[6].empty() ? "0" : row[5] == "leaf" ? "2" : "1") << "depth";
      if (!seen[row[5]]) {
        EXPECT_EQ(std::stoll(row[0]), function_field(*rep, row[5], "max_ns"));
      }
      seen[row[5]] = true;
      if (last >= 0) {
        EXPECT_LE(std::stoll(row[0]), last);
      }
      last = std::stoll(row[0]);
      EXPECT_LT(std::stoll(row[4]), (*rep)["duration_ns"].get<long long>()) << "start after start";
    }
    EXPECT_TRUE(seen["outer"] && seen["sleeper"]) << "28 ms and 3 x 20 ms: the slowest";
  }

  // The merged trace (recorded after c: the trace the queries read now).
  loaded = load(merged, server.url("atrace"));
  ASSERT_TRUE(loaded.exited(0)) << loaded.describe();
  std::vector<nlohmann::json> host;
  for (const char* h : {"0", "1"}) {
    auto one = report_json(merged, {"--host=" + std::string(h)});
    ASSERT_TRUE(one);
    host.push_back(*one);
  }
  EXPECT_EQ(calls_of(host[0], "leaf"), 600);
  EXPECT_EQ(calls_of(host[1], "leaf"), 150);
  {
    SCOPED_TRACE("top_functions_per_host.sql");
    auto rows = server.rows(shipped_query("top_functions_per_host.sql"));
    ASSERT_EQ(rows.size(), 6u) << "3 functions on each of 2 hosts";
    for (const auto& row : rows) {
      ASSERT_EQ(row.size(), 7u);
      SCOPED_TRACE(row[0] + " " + row[2]);
      const auto& h = host.at(std::stoul(row[0]));
      EXPECT_EQ(std::stoll(row[4]), function_field(h, row[2], "calls"));
      EXPECT_EQ(std::stoll(row[5]), function_field(h, row[2], "self_ns"));
      EXPECT_EQ(std::stoll(row[6]), function_field(h, row[2], "total_ns"));
    }
  }
  {
    SCOPED_TRACE("function_per_host.sql");
    std::string q = shipped_query("function_per_host.sql");
    const std::string demo_fn = "'demo::parse_record'";
    ASSERT_NE(q.find(demo_fn), std::string::npos) << "the parameter, as the header says";
    q.replace(q.find(demo_fn), demo_fn.size(), "'leaf'");
    auto rows = server.rows(q);
    ASSERT_EQ(rows.size(), 2u);
    for (const auto& row : rows) {
      ASSERT_EQ(row.size(), 8u);
      SCOPED_TRACE("host " + row[0]);
      const auto& h = host.at(std::stoul(row[0]));
      EXPECT_EQ(std::stoll(row[2]), function_field(h, "leaf", "calls"));
      EXPECT_EQ(std::stoll(row[3]), function_field(h, "leaf", "total_ns"));
      EXPECT_EQ(std::stoll(row[4]), function_field(h, "leaf", "avg_ns"));
      EXPECT_LE(function_field(h, "leaf", "min_ns"), std::stoll(row[5]));
      EXPECT_LE(std::stoll(row[5]), std::stoll(row[6]));
      EXPECT_EQ(std::stoll(row[7]), function_field(h, "leaf", "max_ns"));
    }
  }
}

TEST_F(TablesQueries, DuckdbAnswersEqualClickHouse) {
  REQUIRE_CLICKHOUSE();
  REQUIRE_TOOL("node");
  REQUIRE_TOOL("npm");
  // @duckdb/node-api ships its own DuckDB: from the registry, into the
  // test's directory.
  const std::string modules = file("npm");
  std::filesystem::create_directories(modules);
  Result npm = run({"npm", "install", "--prefix", modules, "--no-audit", "--no-fund",
                    "@duckdb/node-api@1.5.6-r.1"},
                   milliseconds(300000));
  if (!npm.exited(0)) {
    if (in_ci()) FAIL() << "npm install @duckdb/node-api: " << npm.describe();
    GTEST_SKIP() << "npm install @duckdb/node-api failed (no registry?)";
  }
  const std::string c = file("c.data"), dir = file("tables");
  Result r = record(c, "leaf,middle,outer,sleeper", {Paths::target_c, "200", tag_arg()},
                    {"--filter=off", "--kernel=sched,syscalls,faults"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  ASSERT_TRUE(convert(c, "tables", dir));
  std::filesystem::create_directories(file("ch"));
  ClickHouseServer server(file("ch"));
  ASSERT_TRUE(server.ok()) << server.log();
  Result loaded = load(c, server.url("atrace"));
  ASSERT_TRUE(loaded.exited(0)) << loaded.describe();

  const std::string script = std::string(DOCS_SQL_DIR) + "/../../tools/duckdb/atrace_duckdb.cjs";
  int compared = 0;
  for (const auto& entry : std::filesystem::directory_iterator(DOCS_SQL_DIR)) {
    if (entry.path().extension() != ".sql") continue;
    const std::string name = entry.path().filename();
    // target_c sends no message: TablesPairs.DuckdbAnswersEqualClickHouse
    // runs this one on a trace of messages.
    if (name == "request_latency_across_hosts.sql") continue;
    SCOPED_TRACE(name);
    std::string q = read_whole(entry.path());
    for (size_t at; (at = q.find("demo::parse_record")) != std::string::npos;)
      q.replace(at, 18, "leaf");  // function_per_host.sql's parameter
    const std::string qfile = file(name);
    std::ofstream(qfile) << q;
    const std::string want = server.client(q).out;
    EXPECT_NE(want, "");
    Result duck =
        run({"sh", "-c", "cd \"$0\" && node \"$1\" \"$2\" \"$3\"", modules, script, dir, qfile},
            milliseconds(120000));
    ASSERT_TRUE(duck.exited(0)) << duck.describe();
    EXPECT_EQ(duck.out, want);
    compared++;
  }
  EXPECT_GE(compared, 7);
}

}  // namespace
}  // namespace atrace::it
