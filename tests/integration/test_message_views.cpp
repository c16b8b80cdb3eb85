// Views of matched messages (issue 32) on a real recording of
// target_messages: N exchanges per channel between a client and its forked
// server, one message per call, all in one trace. The report's latency
// columns, and the exporters' arrows from each send to its receive.
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "tests/integration/fixture.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

constexpr long long kN = 100;
// Receives in one run: TCP 2 connections x 2 directions, UDP, unix and
// the pipes 2 each; each received one send's bytes.
constexpr long long kReceives = 10 * kN;

std::string target_messages() {
  return (std::filesystem::path(Paths::target_kernel).parent_path() / "target_messages").string();
}

class MessageViews : public IntegrationTest {
 protected:
  void SetUp() override {
    IntegrationTest::SetUp();
    trace_ = file("m.data");
    Result r = record(trace_,
                      "tcp_client,tcp_server,udp_client,udp_server,unix_client,unix_server,"
                      "pipe_client,pipe_server",
                      {target_messages(), std::to_string(kN), tag_arg()},
                      {"--kernel=+net", "--follow-forks"});
    recorded_ = r.exited(0);
    ASSERT_TRUE(recorded_) << r.describe();
  }
  std::string read(const std::string& path) {
    std::ifstream f(path);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
  }
  // atrace convert -i TRACE --to=FORMAT -o OUT; OUT's contents.
  std::string convert(const std::string& format, const std::string& out) {
    Result c = run({Paths::atrace, "convert", "-i", trace_, "--to=" + format, "-o", file(out)});
    EXPECT_TRUE(c.exited(0)) << c.describe();
    return read(file(out));
  }

  std::string trace_;
  bool recorded_ = false;
};

TEST_F(MessageViews, ReportHasTheLatencyOfEveryMatchedMessage) {
  auto rep = report_json(trace_);
  ASSERT_TRUE(rep);
  ASSERT_TRUE(rep->contains("messages")) << rep->dump(1);
  std::set<std::string> traced = {"tcp_client",  "tcp_server",  "udp_client",  "udp_server",
                                  "unix_client", "unix_server", "pipe_client", "pipe_server"};
  long long rows = 0, received_matched = 0, sent_matched = 0;
  for (const auto& r : (*rep)["messages"]) {
    const std::string fn = base_name(r["function"].get<std::string>());
    if (!traced.count(fn)) {
      // The target's own output to the test's pipe: no traced reader, so
      // unmatched, and no latency is made up for it.
      EXPECT_EQ(r["sent_matched"], 0) << r.dump();
      EXPECT_EQ(r["received_matched"], 0) << r.dump();
      EXPECT_EQ(r["latencies"], 0) << r.dump();
      EXPECT_TRUE(r["latency_p50_ns"].is_null()) << r.dump();
      continue;
    }
    rows++;
    // Every message of the exchanges has its other end in the trace.
    EXPECT_EQ(r["sent_matched"], r["sent"]) << r.dump();
    EXPECT_EQ(r["received_matched"], r["received"]) << r.dump();
    // One pair per message, the row its sender or its receiver.
    EXPECT_EQ(r["latencies"], r["sent"].get<long long>() + r["received"].get<long long>())
        << r.dump();
    sent_matched += r["sent_matched"].get<long long>();
    received_matched += r["received_matched"].get<long long>();
    ASSERT_FALSE(r["latency_p50_ns"].is_null()) << r.dump();
    // The receiver is woken by the send: the median receive returns after.
    EXPECT_GT(r["latency_p50_ns"].get<long long>(), 0) << r.dump();
    EXPECT_LE(r["latency_p50_ns"].get<long long>(), r["latency_p99_ns"].get<long long>())
        << r.dump();
  }
  // 2 TCP rows per side, 1 UDP, 1 unix, 2 pipes per side.
  EXPECT_EQ(rows, 12);
  EXPECT_EQ(sent_matched, kReceives);
  EXPECT_EQ(received_matched, kReceives);

  // The text table has the same numbers.
  Result text = run({Paths::atrace, "report", "-i", trace_});
  ASSERT_TRUE(text.exited(0)) << text.describe();
  EXPECT_NE(text.out.find("Matched  Latency p50"), std::string::npos) << text.out;
}

}  // namespace
}  // namespace atrace::it
