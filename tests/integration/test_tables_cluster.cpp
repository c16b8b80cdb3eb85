// `convert --to=clickhouse --cluster` (docs/tables.md) on two real
// clickhouse-servers, each one shard of a cluster in both servers'
// remote_servers: target_c (exact counts) and the demo (threads, so calls
// land on both shards) loaded into the cluster answer every shipped query
// (docs/sql/) as the same traces loaded into one server do, through
// either server's Distributed tables; a second load inserts nothing. A
// server (or a shard) killed with SIGKILL mid-load is one error line that
// says what may be left, and a load once it is back removes that and
// loads the trace whole.
#include <dirent.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "tests/integration/clickhouse_server.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

// The queries whose answers must not depend on where the rows are: every
// shipped one, and per trace and function the numbers report prints.
std::vector<std::string> queries_of(const std::string& db) {
  std::vector<std::string> out = {
      "SELECT trace_id, name, count(), sum(self_ns), sumIf(duration_ns, outermost = 1), "
      "minIf(duration_ns, finished = 1), maxIf(duration_ns, finished = 1) FROM atrace.calls "
      "GLOBAL ANY LEFT JOIN (SELECT trace_id, function_id, name FROM atrace.functions) "
      "USING (trace_id, function_id) GROUP BY trace_id, name ORDER BY trace_id, name",
      "SELECT trace_id, host, calls FROM atrace.traces ORDER BY trace_id, host",
      "SELECT trace_id, count(), sum(duration_ns) FROM atrace.kernel GROUP BY trace_id ORDER BY "
      "trace_id",
  };
  std::vector<std::string> names;
  if (DIR* d = ::opendir(DOCS_SQL_DIR)) {
    while (dirent* e = ::readdir(d)) {
      const std::string n = e->d_name;
      if (n.size() > 4 && n.compare(n.size() - 4, 4, ".sql") == 0) names.push_back(n);
    }
    ::closedir(d);
  }
  std::sort(names.begin(), names.end());
  EXPECT_GE(names.size(), 2u);
  for (const auto& n : names) out.push_back("-- " + n + "\n" + shipped_query(n));
  // The queries name `atrace.`: the same tables in another database.
  for (auto& q : out) {
    for (size_t at = 0; (at = q.find("atrace.", at)) != std::string::npos; at += db.size() + 1)
      q.replace(at, 7, db + ".");
  }
  return out;
}

// Two servers, each one shard of cluster `two` in both configs.
class TwoShards {
 public:
  explicit TwoShards(const std::string& dir) : a_(make(dir + "/a")), b_(make(dir + "/b")) {
    const std::string xml =
        "  <remote_servers><two>" + shard(*a_) + shard(*b_) + "</two></remote_servers>\n";
    for (auto* s : {a_.get(), b_.get()}) {
      s->set_extra_config(xml);
      s->start();
    }
  }
  ClickHouseServer& a() { return *a_; }
  ClickHouseServer& b() { return *b_; }
  bool ok() const { return a_->ok() && b_->ok(); }
  // -o for --cluster=two: every shard's HTTP server.
  std::string url(const std::string& db) const {
    return a_->host() + "," + b_->host().substr(7) + "/" + db;
  }

 private:
  static std::unique_ptr<ClickHouseServer> make(const std::string& dir) {
    std::filesystem::create_directories(dir);
    return std::make_unique<ClickHouseServer>(dir, false);
  }
  static std::string shard(const ClickHouseServer& s) {
    return "<shard><replica><host>127.0.0.1</host><port>" + std::to_string(s.tcp_port()) +
           "</port></replica></shard>";
  }
  std::unique_ptr<ClickHouseServer> a_, b_;
};

class TablesCluster : public IntegrationTest {
 protected:
  Result load(const std::string& trace, const std::string& url, bool cluster) {
    std::vector<std::string> argv = {Paths::atrace,     "convert", "-i", trace,
                                     "--to=clickhouse", "-o",      url};
    if (cluster) argv.push_back("--cluster=two");
    return run(argv, milliseconds(600000));
  }
  // A synthetic trace of a few million calls (bench/format_synth): a load
  // long enough to kill a server in.
  std::string big_trace() {
    const std::string out = file("big.data");
    Result r = run({FORMAT_SYNTH_BIN, "-n", "6M", "-t", "8", "-o", out}, milliseconds(600000));
    EXPECT_TRUE(r.exited(0)) << r.describe();
    return out;
  }
  // Starts loading `trace`; once `watch` holds some of its calls, kills
  // `victim`; returns the load's result.
  Result load_and_kill(const std::string& trace, const std::string& url, bool cluster,
                       ClickHouseServer& watch, const std::string& calls_table,
                       ClickHouseServer& victim) {
    std::vector<std::string> argv = {Paths::atrace,     "convert", "-i", trace,
                                     "--to=clickhouse", "-o",      url};
    if (cluster) argv.push_back("--cluster=two");
    Child loader(argv);
    bool seen = false;
    for (int i = 0; i < 1200 && !seen && loader.running(); ++i) {
      Result r = watch.client("SELECT count() FROM " + calls_table);
      seen = r.exited(0) && !r.out.empty() && r.out != "0\n";
      if (!seen) ::usleep(50000);
    }
    EXPECT_TRUE(seen) << "the load inserted no call before it ended";
    victim.kill();
    return loader.wait(milliseconds(600000));
  }
};

TEST_F(TablesCluster, DistributedAnswersEqualOneServer) {
  REQUIRE_CLICKHOUSE();
  // target_c 200: outer 1, middle 200, leaf 600, sleeper 3 calls; the demo:
  // its table atop demo/demo.cpp (tests/integration/test_counts.cpp).
  const std::string c = file("c.data"), demo = file("demo.data");
  Result r = record(c, "leaf,middle,outer,sleeper", {Paths::target_c, "200", tag_arg()},
                    {"--filter=off", "--kernel=sched,syscalls"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  r = record(demo, "demo::*", {Paths::demo}, {"--filter=off"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  auto rep_c = report_json(c), rep_demo = report_json(demo);
  ASSERT_TRUE(rep_c && rep_demo);
  ASSERT_EQ(calls_of(*rep_c, "leaf"), 600);
  ASSERT_EQ(calls_of(*rep_demo, "demo::parse_record"), 2400);

  TwoShards cluster(file("ch"));
  ASSERT_TRUE(cluster.ok()) << cluster.a().log() << cluster.b().log();
  for (const auto& t : {c, demo}) {
    Result one = load(t, cluster.a().url("single"), false);
    ASSERT_TRUE(one.exited(0)) << one.describe();
    Result dist = load(t, cluster.url("atrace"), true);
    ASSERT_TRUE(dist.exited(0)) << dist.describe();
    EXPECT_NE(dist.err.find("loaded trace "), std::string::npos) << dist.err;
  }
  long long report_calls = 0;
  for (const auto* rep : {&*rep_c, &*rep_demo})
    for (const auto& f : (*rep)["functions"]) report_calls += f["calls"].get<long long>();
  const std::string all = std::to_string(report_calls);

  auto check = [&](const char* when) {
    SCOPED_TRACE(when);
    EXPECT_EQ(cluster.a().value("SELECT count() FROM single.calls"), all);
    EXPECT_EQ(cluster.a().value("SELECT count() FROM atrace.calls"), all);
    EXPECT_EQ(cluster.b().value("SELECT count() FROM atrace.calls"), all);
    // The shards share the calls (spread call by call).
    const long long on_a = std::stoll(cluster.a().value("SELECT count() FROM atrace.calls_local"));
    const long long on_b = std::stoll(cluster.b().value("SELECT count() FROM atrace.calls_local"));
    EXPECT_GT(on_a, 0);
    EXPECT_GT(on_b, 0);
    EXPECT_EQ(on_a + on_b, report_calls);
    EXPECT_EQ(cluster.b().value("SELECT count() FROM atrace.traces"), "2");
    const auto single = queries_of("single"), distributed = queries_of("atrace");
    for (size_t i = 0; i < single.size(); ++i) {
      SCOPED_TRACE(distributed[i]);
      auto want = cluster.a().rows(single[i]);
      // target_c and the demo send no message: the pairs are checked below.
      if (distributed[i].find("request_latency_across_hosts.sql") == std::string::npos) {
        EXPECT_FALSE(want.empty());
      }
      EXPECT_EQ(cluster.a().rows(distributed[i]), want) << "through the first server";
      EXPECT_EQ(cluster.b().rows(distributed[i]), want) << "through the second";
    }
    // And they are report's numbers.
    for (const auto& row : cluster.b().rows(queries_of("atrace")[0])) {
      ASSERT_EQ(row.size(), 7u);
      const auto& rep = row[1].find("demo::") != std::string::npos ? *rep_demo : *rep_c;
      SCOPED_TRACE(row[1]);
      EXPECT_EQ(std::stoll(row[2]), function_field(rep, row[1], "calls"));
      EXPECT_EQ(std::stoll(row[3]), function_field(rep, row[1], "self_ns"));
      EXPECT_EQ(std::stoll(row[4]), function_field(rep, row[1], "total_ns"));
      EXPECT_EQ(std::stoll(row[5]), function_field(rep, row[1], "min_ns"));
      EXPECT_EQ(std::stoll(row[6]), function_field(rep, row[1], "max_ns"));
    }
  };
  ASSERT_NO_FATAL_FAILURE(check("first load"));
  for (const auto& t : {c, demo}) {
    Result again = load(t, cluster.url("atrace"), true);
    EXPECT_TRUE(again.exited(0)) << again.describe();
    EXPECT_NE(again.err.find("already loaded"), std::string::npos) << again.err;
  }
  ASSERT_NO_FATAL_FAILURE(check("second load"));

  // Matched messages (message_pairs, spread by their send's thread and
  // time): target_messages (tests/integration/test_tables_pairs.cpp), in
  // databases of their own so that the queries above keep reading the demo.
  const std::string msgs = file("msgs.data");
  r = record(
      msgs,
      "tcp_client,tcp_server,udp_client,udp_server,unix_client,unix_server,pipe_client,"
      "pipe_server",
      {(std::filesystem::path(Paths::target_kernel).parent_path() / "target_messages").string(),
       "50", tag_arg()},
      {"--kernel=+net", "--follow-forks", "--filter=off"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  Result one = load(msgs, cluster.a().url("pairs_single"), false);
  ASSERT_TRUE(one.exited(0)) << one.describe();
  Result dist = load(msgs, cluster.url("pairs"), true);
  ASSERT_TRUE(dist.exited(0)) << dist.describe();
  EXPECT_NE(cluster.a().value("SELECT count() FROM pairs.message_pairs_local"), "0");
  EXPECT_NE(cluster.b().value("SELECT count() FROM pairs.message_pairs_local"), "0");
  const std::string latency = "request_latency_across_hosts.sql";
  const auto single = queries_of("pairs_single"), distributed = queries_of("pairs");
  for (size_t i = 0; i < single.size(); ++i) {
    if (single[i].find(latency) == std::string::npos) continue;
    auto want = cluster.a().rows(single[i]);
    EXPECT_GE(want.size(), 12u) << "a client and a server row per channel";
    EXPECT_EQ(cluster.a().rows(distributed[i]), want) << "through the first server";
    EXPECT_EQ(cluster.b().rows(distributed[i]), want) << "through the second";
  }

  // A cluster the servers do not have, or a shard left out of the URL.
  Result nope = run({Paths::atrace, "convert", "-i", c, "--to=clickhouse", "--cluster=nope", "-o",
                     cluster.url("atrace")});
  EXPECT_NE(expect_one_error_line(nope).find("no cluster 'nope'"), std::string::npos);
  Result half = run({Paths::atrace, "convert", "-i", c, "--to=clickhouse", "--cluster=two", "-o",
                     cluster.a().url("atrace")});
  EXPECT_NE(expect_one_error_line(half).find("has 2 shards and the URL lists 1 server"),
            std::string::npos);
  // Plain tables are not a cluster's, nor the other way round.
  Result plain = load(c, cluster.url("single"), true);
  EXPECT_NE(expect_one_error_line(plain).find("engine MergeTree, not Distributed"),
            std::string::npos);
}

// kill -9 of the one server mid-load: one line naming the tables where
// rows may be left (it cannot be asked to remove them); they have no
// `traces` row, and the next load removes them before loading it whole.
TEST_F(TablesCluster, ServerKilledMidLoad) {
  REQUIRE_CLICKHOUSE();
  const std::string trace = big_trace();
  std::filesystem::create_directories(file("ch"));
  ClickHouseServer server(file("ch"));
  ASSERT_TRUE(server.ok()) << server.log();
  const std::string url = server.url("atrace");
  Result killed = load_and_kill(trace, url, false, server, "atrace.calls", server);
  const std::string line = expect_one_error_line(killed);
  EXPECT_NE(line.find("may be left in atrace.processes, atrace.threads, atrace.functions, "
                      "atrace.calls, atrace.kernel, atrace.messages, atrace.message_pairs, "
                      "atrace.detaches, "
                      "atrace.traces without their `traces` row"),
            std::string::npos)
      << line;
  EXPECT_NE(line.find("loading the trace again removes them"), std::string::npos) << line;

  server.start();
  ASSERT_TRUE(server.ok()) << server.log();
  EXPECT_EQ(server.value("SELECT count() FROM atrace.traces"), "0") << "no trace claimed";
  Result again = load(trace, url, false);
  ASSERT_TRUE(again.exited(0)) << again.describe();
  // Every call once: the rows of the killed load are gone.
  const std::string calls = server.value("SELECT sum(calls) FROM atrace.traces");
  EXPECT_EQ(server.value("SELECT count() FROM atrace.calls"), calls);
  EXPECT_EQ(server.value("SELECT count() FROM atrace.calls"),
            server.value("SELECT uniqExact(call_id) FROM atrace.calls"));
  EXPECT_GT(std::stoll(calls), 1000000);
}

// kill -9 of the second shard while the first one takes the rows: one
// line; the first shard's rows removed, the second's named.
TEST_F(TablesCluster, ShardKilledMidLoad) {
  REQUIRE_CLICKHOUSE();
  const std::string trace = big_trace();
  TwoShards cluster(file("ch"));
  ASSERT_TRUE(cluster.ok()) << cluster.a().log() << cluster.b().log();
  Result killed = load_and_kill(trace, cluster.url("atrace"), true, cluster.b(),
                                "atrace.calls_local", cluster.b());
  const std::string line = expect_one_error_line(killed);
  const std::string b_tables = "of " + cluster.b().host();
  EXPECT_NE(line.find(b_tables), std::string::npos) << line;
  EXPECT_EQ(line.find("of " + cluster.a().host()), std::string::npos) << "a was cleaned: " << line;
  EXPECT_EQ(cluster.a().value("SELECT count() FROM atrace.calls_local"), "0");

  cluster.b().start();
  ASSERT_TRUE(cluster.b().ok()) << cluster.b().log();
  Result again = load(trace, cluster.url("atrace"), true);
  ASSERT_TRUE(again.exited(0)) << again.describe();
  const std::string calls = cluster.a().value("SELECT sum(calls) FROM atrace.traces");
  EXPECT_EQ(cluster.a().value("SELECT count() FROM atrace.calls"), calls);
  EXPECT_EQ(cluster.b().value("SELECT uniqExact(call_id) FROM atrace.calls"), calls);
  EXPECT_GT(std::stoll(calls), 1000000);
}

}  // namespace
}  // namespace atrace::it
