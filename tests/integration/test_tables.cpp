// The typed tables (docs/tables.md) on a real ClickHouse: Debian's
// clickhouse-server, started by the test from a short config in its temp
// dir on free ports of 127.0.0.1, and stopped at the end. A recording of
// target_c (exact call counts) is loaded with `convert --to=clickhouse`;
// SQL over `calls`, and the shipped queries of docs/sql/, give the numbers
// `atrace report --format=json` gives; a second load inserts nothing; a
// stopped server, a wrong URL and a table of other columns are one error
// line each. `--to=tables` writes files whose rows are the same calls.
#include <map>

#include "tests/integration/clickhouse_server.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

class Tables : public IntegrationTest {
 protected:
  // target_c 200: outer 1, middle 200, leaf 600, sleeper 3 calls.
  void record_target(const std::string& trace) {
    Result r = record(trace, "leaf,middle,outer,sleeper", {Paths::target_c, "200", tag_arg()},
                      {"--filter=off"});
    ASSERT_TRUE(r.exited(0)) << r.describe();
  }
};

TEST_F(Tables, LoadedCallsEqualTheReport) {
  REQUIRE_CLICKHOUSE();
  const std::string trace = file("c.data");
  ASSERT_NO_FATAL_FAILURE(record_target(trace));
  auto rep = report_json(trace);
  ASSERT_TRUE(rep);

  std::filesystem::create_directories(file("ch"));
  ClickHouseServer server(file("ch"));
  ASSERT_TRUE(server.ok()) << server.log();
  Result load =
      run({Paths::atrace, "convert", "-i", trace, "--to=clickhouse", "-o", server.url("atrace")});
  ASSERT_TRUE(load.exited(0)) << load.describe();
  EXPECT_NE(load.err.find("loaded trace "), std::string::npos) << load.err;

  // Per function: calls, self and total time, min and max of the finished.
  const std::string per_function =
      "SELECT name, count(), sum(self_ns), sumIf(duration_ns, outermost = 1), "
      "minIf(duration_ns, finished = 1), maxIf(duration_ns, finished = 1) "
      "FROM atrace.calls ANY LEFT JOIN (SELECT trace_id, function_id, name FROM "
      "atrace.functions) USING (trace_id, function_id) GROUP BY name ORDER BY name";
  auto check = [&](const char* when) {
    auto rows = server.rows(per_function);
    ASSERT_EQ(rows.size(), (*rep)["functions"].size()) << when;
    for (const auto& row : rows) {
      ASSERT_EQ(row.size(), 6u);
      SCOPED_TRACE(std::string(when) + ": " + row[0]);
      EXPECT_EQ(std::stoll(row[1]), function_field(*rep, row[0], "calls"));
      EXPECT_EQ(std::stoll(row[2]), function_field(*rep, row[0], "self_ns"));
      EXPECT_EQ(std::stoll(row[3]), function_field(*rep, row[0], "total_ns"));
      EXPECT_EQ(std::stoll(row[4]), function_field(*rep, row[0], "min_ns"));
      EXPECT_EQ(std::stoll(row[5]), function_field(*rep, row[0], "max_ns"));
    }
    EXPECT_EQ(calls_of(*rep, "leaf"), 600);
    EXPECT_EQ(server.value("SELECT count() FROM atrace.traces"), "1") << when;
  };
  ASSERT_NO_FATAL_FAILURE(check("first load"));
  // Every call but the outermost ones has its caller, in the same thread.
  EXPECT_EQ(server.value("SELECT count() FROM atrace.calls WHERE parent_id != 0 AND parent_id NOT "
                         "IN (SELECT call_id FROM atrace.calls)"),
            "0");
  EXPECT_EQ(server.value("SELECT count() FROM atrace.calls WHERE depth = 0 AND parent_id != 0"),
            "0");
  // The sleeps: nanosleep system calls and off-CPU time inside sleeper().
  EXPECT_EQ(server.value("SELECT count() FROM atrace.traces WHERE command LIKE '%target_c%'"), "1");

  // The same trace again: nothing inserted, the same answers.
  Result again =
      run({Paths::atrace, "convert", "-i", trace, "--to=clickhouse", "-o", server.url("atrace")});
  EXPECT_TRUE(again.exited(0)) << again.describe();
  EXPECT_NE(again.err.find("already loaded"), std::string::npos) << again.err;
  ASSERT_NO_FATAL_FAILURE(check("second load"));

  // The shipped queries, run as the docs say, give report's numbers.
  auto top = server.rows(shipped_query("top_functions_self.sql"));
  ASSERT_EQ(top.size(), (*rep)["functions"].size());
  long long last_self = -1;
  for (const auto& row : top) {
    ASSERT_GE(row.size(), 5u);
    SCOPED_TRACE("top_functions_self.sql: " + row[0]);
    EXPECT_EQ(std::stoll(row[2]), function_field(*rep, row[0], "calls"));
    EXPECT_EQ(std::stoll(row[3]), function_field(*rep, row[0], "self_ns"));
    EXPECT_EQ(std::stoll(row[4]), function_field(*rep, row[0], "total_ns"));
    if (last_self >= 0) {
      EXPECT_LE(std::stoll(row[3]), last_self) << "by self time";
    }
    last_self = std::stoll(row[3]);
  }
  auto lat = server.rows(shipped_query("call_latency_percentiles.sql"));
  ASSERT_EQ(lat.size(), (*rep)["functions"].size());
  for (const auto& row : lat) {
    ASSERT_GE(row.size(), 8u);
    SCOPED_TRACE("call_latency_percentiles.sql: " + row[0]);
    const long long finished = function_field(*rep, row[0], "calls") -
                               function_field(*rep, row[0], "unfinished") -
                               function_field(*rep, row[0], "untimed");
    EXPECT_EQ(std::stoll(row[2]), finished);
    EXPECT_EQ(std::stoll(row[3]), function_field(*rep, row[0], "min_ns"));
    const long long p50 = std::stoll(row[4]), p90 = std::stoll(row[5]), p99 = std::stoll(row[6]);
    EXPECT_LE(std::stoll(row[3]), p50);
    EXPECT_LE(p50, p90);
    EXPECT_LE(p90, p99);
    EXPECT_LE(p99, std::stoll(row[7]));
    EXPECT_EQ(std::stoll(row[7]), function_field(*rep, row[0], "max_ns"));
  }
  // sleeper's three calls sleep 20 ms each.
  EXPECT_GE(function_field(*rep, "sleeper", "min_ns"), 20000000);
}

TEST_F(Tables, FilesHoldTheReportsCalls) {
  const std::string trace = file("c.data"), dir = file("tables");
  ASSERT_NO_FATAL_FAILURE(record_target(trace));
  auto rep = report_json(trace);
  ASSERT_TRUE(rep);
  ASSERT_TRUE(convert(trace, "tables", dir));

  std::map<std::string, std::string> name_of;  // function_id -> name
  for (const auto& row : tsv_rows(read_whole(dir + "/functions.tsv"))) {
    ASSERT_EQ(row.size(), 10u);
    name_of[row[1]] = row[3];
  }
  std::map<std::string, long long> calls, self;
  size_t rows = 0;
  for (const auto& row : tsv_rows(read_whole(dir + "/calls.tsv"))) {
    ASSERT_EQ(row.size(), 27u);
    EXPECT_EQ(row[26], "0") << "one recording: raw = corrected";
    calls[name_of[row[6]]]++;
    self[name_of[row[6]]] += std::stoll(row[11]);
    rows++;
  }
  long long report_calls = 0;
  for (const auto& f : (*rep)["functions"]) {
    const std::string name = f["name"];
    EXPECT_EQ(calls[name], f["calls"].get<long long>()) << name;
    EXPECT_EQ(self[name], f["self_ns"].get<long long>()) << name;
    report_calls += f["calls"].get<long long>();
  }
  EXPECT_EQ(static_cast<long long>(rows), report_calls);
  EXPECT_EQ(calls["leaf"], 600);
  auto traces = tsv_rows(read_whole(dir + "/traces.tsv"));
  ASSERT_EQ(traces.size(), 1u);
  EXPECT_EQ(traces[0][16], std::to_string(report_calls)) << "traces.calls";
  const std::string schema = read_whole(dir + "/schema.sql");
  for (const char* t : {"traces", "processes", "threads", "functions", "calls", "kernel",
                        "messages", "message_pairs", "detaches"})
    EXPECT_NE(schema.find(std::string("CREATE TABLE IF NOT EXISTS atrace.") + t + "\n"),
              std::string::npos)
        << t;

  // The same id every time: a second conversion writes the same rows.
  ASSERT_TRUE(convert(trace, "tables", file("again")));
  EXPECT_EQ(read_whole(file("again") + "/calls.tsv"), read_whole(dir + "/calls.tsv"));

  // The files load by hand as docs/tables.md says, into the same tables.
  REQUIRE_CLICKHOUSE();
  std::filesystem::create_directories(file("ch"));
  ClickHouseServer server(file("ch"));
  ASSERT_TRUE(server.ok()) << server.log();
  std::string statement;
  for (char c : schema) {
    statement += c;
    if (c == ';') {
      // Comments and blank lines before a statement are fine for the server.
      ASSERT_TRUE(server.client(statement.substr(0, statement.size() - 1)).exited(0)) << statement;
      statement.clear();
    }
  }
  for (const auto& def : {"calls", "functions", "traces"}) {
    Result r = run({"sh", "-c",
                    std::string("clickhouse-client --host=127.0.0.1 --port=") +
                        "$0 --query='INSERT INTO atrace." + def + " FORMAT TabSeparated' < " + dir +
                        "/" + def + ".tsv",
                    std::to_string(server.tcp_port())});
    ASSERT_TRUE(r.exited(0)) << r.describe();
  }
  EXPECT_EQ(server.value("SELECT count() FROM atrace.calls"), std::to_string(report_calls));
}

// A load that fails half way (here: a materialized view on `kernel`
// divides by zero, after `calls` took its rows) is one error line and
// leaves no row of that trace; loading it again once the view is gone
// loads it whole.
TEST_F(Tables, AFailedLoadLeavesNothing) {
  REQUIRE_CLICKHOUSE();
  const std::string a = file("a.data"), b = file("b.data");
  ASSERT_NO_FATAL_FAILURE(record_target(a));
  ASSERT_NO_FATAL_FAILURE(record_target(b));
  std::filesystem::create_directories(file("ch"));
  ClickHouseServer server(file("ch"));
  ASSERT_TRUE(server.ok()) << server.log();
  const std::string url = server.url("atrace");
  Result first = run({Paths::atrace, "convert", "-i", a, "--to=clickhouse", "-o", url});
  ASSERT_TRUE(first.exited(0)) << first.describe();
  ASSERT_EQ(server.value("SELECT count() FROM atrace.calls"), "804");
  const std::string kernel_rows = server.value("SELECT count() FROM atrace.kernel");
  ASSERT_NE(kernel_rows, "0") << "target_c's sleeps";
  ASSERT_TRUE(server
                  .client("CREATE MATERIALIZED VIEW atrace.boom ENGINE = MergeTree() ORDER BY x "
                          "AS SELECT intDiv(1, toUInt64(host) * 0) AS x FROM atrace.kernel")
                  .exited(0));

  Result failed = run({Paths::atrace, "convert", "-i", b, "--to=clickhouse", "-o", url});
  const std::string line = expect_one_error_line(failed);
  EXPECT_NE(line.find("Division by zero"), std::string::npos) << line;
  EXPECT_NE(line.find("were removed"), std::string::npos) << line;
  EXPECT_EQ(server.value("SELECT count() FROM atrace.calls"), "804") << "b's calls removed";
  EXPECT_EQ(server.value("SELECT count() FROM atrace.kernel"), kernel_rows);
  EXPECT_EQ(server.value("SELECT count() FROM atrace.functions"), "4");
  EXPECT_EQ(server.value("SELECT count() FROM atrace.traces"), "1");

  ASSERT_TRUE(server.client("DROP TABLE atrace.boom").exited(0));
  Result again = run({Paths::atrace, "convert", "-i", b, "--to=clickhouse", "-o", url});
  ASSERT_TRUE(again.exited(0)) << again.describe();
  EXPECT_EQ(server.value("SELECT count() FROM atrace.calls"), "1608");
  EXPECT_EQ(server.value("SELECT count() FROM atrace.traces"), "2");
  EXPECT_EQ(server.value("SELECT uniqExact(trace_id) FROM atrace.calls"), "2");
}

// A merged trace (docs/merge.md): one `traces` row per recording, each
// call under its recording's host, all of report's calls.
TEST_F(Tables, MergedTraceHasARowPerRecording) {
  const std::string a = file("a.data"), b = file("b.data"), merged = file("m.data");
  ASSERT_NO_FATAL_FAILURE(record_target(a));
  Result r = record(b, "leaf,middle,outer", {Paths::target_c, "50", tag_arg()}, {"--filter=off"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  Result m = run({Paths::atrace, "merge", "-o", merged, a, b});
  ASSERT_TRUE(m.exited(0)) << m.describe();
  auto rep = report_json(merged);
  ASSERT_TRUE(rep);
  ASSERT_TRUE(convert(merged, "tables", file("tables")));
  auto traces = tsv_rows(read_whole(file("tables") + "/traces.tsv"));
  ASSERT_EQ(traces.size(), 2u);
  EXPECT_EQ(traces[0][1], "0");
  EXPECT_EQ(traces[1][1], "1");
  EXPECT_EQ(traces[0][0], traces[1][0]) << "one trace id";
  EXPECT_EQ(traces[0][5], a);  // source
  EXPECT_EQ(traces[1][5], b);
  EXPECT_EQ(traces[0][17], "1");  // merged
  // target_c 200 and 50: 804 and 201 calls.
  EXPECT_EQ(traces[0][16], "804");
  EXPECT_EQ(traces[1][16], "201");
  std::map<std::string, long long> per_host;
  for (const auto& row : tsv_rows(read_whole(file("tables") + "/calls.tsv"))) per_host[row[1]]++;
  EXPECT_EQ(per_host["0"], 804);
  EXPECT_EQ(per_host["1"], 201);
  long long report_calls = 0;
  for (const auto& f : (*rep)["functions"]) report_calls += f["calls"].get<long long>();
  EXPECT_EQ(report_calls, 804 + 201);
}

TEST_F(Tables, ServerErrorsAreOneLine) {
  const std::string trace = file("c.data");
  ASSERT_NO_FATAL_FAILURE(record_target(trace));

  // Nothing listens there.
  Result down = run({Paths::atrace, "convert", "-i", trace, "--to=clickhouse", "-o",
                     "http://127.0.0.1:" + std::to_string(free_port()) + "/atrace"});
  std::string line = expect_one_error_line(down);
  EXPECT_NE(line.find("Couldn't connect"), std::string::npos) << line;

  Result scheme =
      run({Paths::atrace, "convert", "-i", trace, "--to=clickhouse", "-o", "ftp://x/db"});
  line = expect_one_error_line(scheme);
  EXPECT_NE(line.find("http://HOST:PORT/DATABASE"), std::string::npos) << line;

  REQUIRE_CLICKHOUSE();
  std::filesystem::create_directories(file("ch"));
  ClickHouseServer server(file("ch"));
  ASSERT_TRUE(server.ok()) << server.log();
  ASSERT_TRUE(server.client("CREATE DATABASE other").exited(0));
  ASSERT_TRUE(server.client("CREATE TABLE other.calls (x UInt8) ENGINE = Memory").exited(0));
  Result columns =
      run({Paths::atrace, "convert", "-i", trace, "--to=clickhouse", "-o", server.url("other")});
  line = expect_one_error_line(columns);
  EXPECT_NE(line.find("other.calls exists with other columns"), std::string::npos) << line;
  EXPECT_EQ(server.value("SELECT count() FROM system.tables WHERE database = 'other'"), "1")
      << "nothing created";

  // A server stopped under a loaded database: one line, nothing claimed.
  server.stop();
  Result stopped =
      run({Paths::atrace, "convert", "-i", trace, "--to=clickhouse", "-o", server.url("atrace")});
  line = expect_one_error_line(stopped);
  EXPECT_NE(line.find("Couldn't connect"), std::string::npos) << line;
}

}  // namespace
}  // namespace atrace::it
