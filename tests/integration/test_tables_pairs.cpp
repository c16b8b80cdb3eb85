// Matched messages in the typed tables (`message_pairs`, docs/tables.md)
// and the shipped request_latency_across_hosts.sql on a real ClickHouse:
// its p50 and p99 per host, function, protocol and peer are exactly
// report's messages rows (`latencies`, `latency_p50_ns`, `latency_p99_ns`)
// for
//   - a merged trace of two recordings (tests/integration/test_merge.cpp's
//     pair): target_reqresp's client and server, each recorded by its own
//     atrace, 200 TCP requests and answers and 200 pipe messages between
//     them, so every pair crosses hosts;
//   - one recording of target_messages (test_messages.cpp): 50 exchanges
//     over TCP on 127.0.0.1 and [::1], UDP, a unix socketpair and pipes
//     between a client and its forked server: every pairing rule.
// Loading again inserts no pair twice; the same query on DuckDB
// (tools/duckdb/atrace_duckdb.cjs) gives ClickHouse's rows.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "tests/integration/clickhouse_server.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

constexpr int kRequests = 200;
constexpr int kExchanges = 50;

std::string target_beside_kernel(const char* name) {
  return (std::filesystem::path(Paths::target_kernel).parent_path() / name).string();
}

// A report messages row's key as the query prints it: host number,
// function name ("" for none), protocol, peer.
using RowKey = std::tuple<std::string, std::string, std::string, std::string>;

class TablesPairs : public IntegrationTest {
 protected:
  Result load(const std::string& trace, const std::string& url) {
    return run({Paths::atrace, "convert", "-i", trace, "--to=clickhouse", "-o", url},
               milliseconds(300000));
  }

  // target_reqresp's server and client, each recorded by its own atrace,
  // merged into `merged`.
  bool record_merged_pair(const std::string& merged) {
    const std::string server = file("server.data"), client = file("client.data");
    const std::string fifo = file("fifo");
    if (mkfifo(fifo.c_str(), 0600) != 0) {
      ADD_FAILURE() << "mkfifo " << fifo;
      return false;
    }
    const std::string n = std::to_string(kRequests);
    Child s({Paths::atrace, "record", "-o", server, "--kernel=+net", "--filter=off",
             "--select=serve_request,read_fifo", "--", target_beside_kernel("target_reqresp"),
             "server", "0", n, fifo});
    auto ready = s.wait_for_line("ready port=", scaled(milliseconds(30000)));
    if (!ready) {
      ADD_FAILURE() << "the server did not start: " << s.wait(milliseconds(1000)).describe();
      return false;
    }
    const std::string port = ready->substr(ready->find('=') + 1);
    Result c = run({Paths::atrace, "record", "-o", client, "--kernel=+net", "--filter=off",
                    "--select=send_request,write_fifo", "--",
                    target_beside_kernel("target_reqresp"), "client", "127.0.0.1", port, n, fifo},
                   scaled(milliseconds(120000)));
    Result sr = s.wait(scaled(milliseconds(60000)));
    EXPECT_TRUE(c.exited(0)) << c.describe();
    EXPECT_TRUE(sr.exited(0)) << sr.describe();
    if (!c.exited(0) || !sr.exited(0)) return false;
    Result m = run({Paths::atrace, "merge", client, server, "-o", merged});
    EXPECT_TRUE(m.exited(0)) << m.describe();
    return m.exited(0);
  }

  // target_messages, its forked server followed: one recording.
  bool record_messages(const std::string& out) {
    Result r =
        record(out,
               "tcp_client,tcp_server,udp_client,udp_server,unix_client,unix_server,"
               "pipe_client,pipe_server",
               {target_beside_kernel("target_messages"), std::to_string(kExchanges), tag_arg()},
               {"--kernel=+net", "--follow-forks", "--filter=off"});
    EXPECT_TRUE(r.exited(0)) << r.describe();
    return r.exited(0);
  }

  // The shipped query's rows compared with report's messages rows (those
  // with latencies): the same rows, the same counts and percentiles.
  // Returns the query's rows by key.
  std::map<RowKey, std::vector<std::string>> expect_report_rows(ClickHouseServer& server,
                                                                const std::string& trace) {
    std::map<RowKey, std::vector<std::string>> got;
    auto rep = report_json(trace);
    if (!rep) return got;
    // A merged trace's rows name their host by its label (host_labels):
    // the host name, with "#N" when two recordings share it.
    std::map<std::string, std::string> host_of_label;
    const auto hosts = server.rows(
        "SELECT host, host_name FROM atrace.traces WHERE trace_id = (SELECT trace_id FROM "
        "atrace.traces ORDER BY start_realtime_ns DESC LIMIT 1) ORDER BY host");
    for (const auto& h : hosts) {
      size_t same = 0;
      for (const auto& o : hosts) same += o[1] == h[1];
      host_of_label[hosts.size() < 2 ? "" : same > 1 ? h[1] + "#" + h[0] : h[1]] = h[0];
    }
    for (const auto& row : server.rows(shipped_query("request_latency_across_hosts.sql"))) {
      EXPECT_EQ(row.size(), 11u);
      if (row.size() != 11u) return got;
      got[{row[0], row[2], row[4], row[5]}] = row;
    }
    size_t with_latency = 0;
    for (const auto& m : (*rep)["messages"]) {
      if (m["latencies"].get<long long>() == 0) continue;
      with_latency++;
      const std::string label = m.contains("host") ? m["host"].get<std::string>() : "";
      std::string fn = m["function"].get<std::string>();
      if (fn == "(no traced function)") fn = "";
      const RowKey key{host_of_label[label], fn, m["protocol"], m["peer"]};
      SCOPED_TRACE(m.dump());
      auto it = got.find(key);
      if (it == got.end()) {
        ADD_FAILURE() << "no row of the query";
        continue;
      }
      EXPECT_EQ(std::stoll(it->second[6]), m["latencies"].get<long long>());
      EXPECT_EQ(std::stoll(it->second[8]), m["latency_p50_ns"].get<long long>());
      EXPECT_EQ(std::stoll(it->second[9]), m["latency_p99_ns"].get<long long>());
    }
    EXPECT_EQ(got.size(), with_latency) << "a row for every report row with latencies";
    // Every matched receive is one pair.
    long long received_matched = 0;
    for (const auto& m : (*rep)["messages"])
      received_matched += m["received_matched"].get<long long>();
    EXPECT_EQ(server.value("SELECT count() FROM atrace.message_pairs WHERE trace_id = (SELECT "
                           "trace_id FROM atrace.traces ORDER BY start_realtime_ns DESC LIMIT 1)"),
              std::to_string(received_matched));
    return got;
  }
};

TEST_F(TablesPairs, LatencyEqualsTheReport) {
  REQUIRE_CLICKHOUSE();
  const std::string local = file("local.data"), merged = file("merged.data");
  ASSERT_TRUE(record_messages(local));
  ASSERT_TRUE(record_merged_pair(merged));  // recorded last: the queries read it once loaded

  std::filesystem::create_directories(file("ch"));
  ClickHouseServer server(file("ch"));
  ASSERT_TRUE(server.ok()) << server.log();
  {
    SCOPED_TRACE("one recording, every protocol");
    Result loaded = load(local, server.url("atrace"));
    ASSERT_TRUE(loaded.exited(0)) << loaded.describe();
    auto rows = expect_report_rows(server, local);
    // Each exchange is a request and an answer, each matched: a client
    // row and a server row per protocol and address family hold 2 pairs
    // an exchange, none across hosts (one recording).
    std::map<std::string, long long> pairs;  // function -> pairs
    for (const auto& [key, row] : rows) {
      pairs[std::get<1>(key)] += std::stoll(row[6]);
      EXPECT_EQ(row[7], "0") << std::get<1>(key);
    }
    for (const char* fn :
         {"udp_client", "udp_server", "unix_client", "unix_server", "pipe_client", "pipe_server"})
      EXPECT_EQ(pairs[fn], 2 * kExchanges) << fn;
    // TCP: over 127.0.0.1 and [::1].
    EXPECT_EQ(pairs["tcp_client"], 4 * kExchanges);
    EXPECT_EQ(pairs["tcp_server"], 4 * kExchanges);
  }
  {
    SCOPED_TRACE("merged client and server");
    Result loaded = load(merged, server.url("atrace"));
    ASSERT_TRUE(loaded.exited(0)) << loaded.describe();
    auto rows = expect_report_rows(server, merged);
    // The client (host 0) sent each request from send_request and got its
    // answer there; the server the other way round; the fifo one way:
    // every pair across the two hosts.
    std::map<std::pair<std::string, std::string>, std::vector<std::string>> by_fn;
    for (const auto& [key, row] : rows) by_fn[{std::get<1>(key), std::get<2>(key)}] = row;
    const std::map<std::pair<std::string, std::string>, std::pair<const char*, long long>> want = {
        {{"send_request", "tcp"}, {"0", 2 * kRequests}},
        {{"serve_request", "tcp"}, {"1", 2 * kRequests}},
        {{"write_fifo", "pipe"}, {"0", kRequests}},
        {{"read_fifo", "pipe"}, {"1", kRequests}}};
    for (const auto& [fn, w] : want) {
      SCOPED_TRACE(fn.first);
      ASSERT_TRUE(by_fn.count(fn));
      const auto& row = by_fn[fn];
      EXPECT_EQ(row[0], w.first) << "host";
      EXPECT_EQ(std::stoll(row[6]), w.second) << "pairs";
      EXPECT_EQ(std::stoll(row[7]), w.second) << "all across hosts";
      EXPECT_LE(std::stoll(row[8]), std::stoll(row[9])) << "p50 <= p99";
      EXPECT_LE(std::stoll(row[9]), std::stoll(row[10])) << "p99 <= max";
    }
    // Loading again: nothing inserted, no pair twice.
    const std::string count = "SELECT count() FROM atrace.message_pairs";
    const std::string before = server.value(count);
    Result again = load(merged, server.url("atrace"));
    ASSERT_TRUE(again.exited(0)) << again.describe();
    EXPECT_NE(again.err.find("already loaded"), std::string::npos) << again.err;
    EXPECT_EQ(server.value(count), before);
    EXPECT_EQ(expect_report_rows(server, merged), rows);
  }
}

// The query on DuckDB, over `--to=tables`'s files, gives ClickHouse's rows.
TEST_F(TablesPairs, DuckdbAnswersEqualClickHouse) {
  REQUIRE_CLICKHOUSE();
  REQUIRE_TOOL("node");
  REQUIRE_TOOL("npm");
  const std::string modules = file("npm");
  std::filesystem::create_directories(modules);
  Result npm = run({"npm", "install", "--prefix", modules, "--no-audit", "--no-fund",
                    "@duckdb/node-api@1.5.6-r.1"},
                   milliseconds(300000));
  if (!npm.exited(0)) {
    if (in_ci()) FAIL() << "npm install @duckdb/node-api: " << npm.describe();
    GTEST_SKIP() << "npm install @duckdb/node-api failed (no registry?)";
  }
  const std::string local = file("local.data"), dir = file("tables");
  ASSERT_TRUE(record_messages(local));
  ASSERT_TRUE(convert(local, "tables", dir));
  std::filesystem::create_directories(file("ch"));
  ClickHouseServer server(file("ch"));
  ASSERT_TRUE(server.ok()) << server.log();
  Result loaded = load(local, server.url("atrace"));
  ASSERT_TRUE(loaded.exited(0)) << loaded.describe();

  const std::string query = std::string(DOCS_SQL_DIR) + "/request_latency_across_hosts.sql";
  const std::string want = server.client(read_whole(query)).out;
  EXPECT_GE(tsv_rows(want).size(), 12u) << "a client and a server row per channel: " << want;
  const std::string script = std::string(DOCS_SQL_DIR) + "/../../tools/duckdb/atrace_duckdb.cjs";
  Result duck =
      run({"sh", "-c", "cd \"$0\" && node \"$1\" \"$2\" \"$3\"", modules, script, dir, query},
          milliseconds(120000));
  ASSERT_TRUE(duck.exited(0)) << duck.describe();
  EXPECT_EQ(duck.out, want);
}

}  // namespace
}  // namespace atrace::it
