// `atrace merge` (issue 32) on real recordings: a client and a server,
// each recorded by its own atrace on this host, exchange 1,000 TCP
// requests and answers and then 1,000 messages through a named pipe. The
// two recordings share one boot, so their clocks really are one: merged
// with --estimate, the method must find that (offset within 10 us of 0,
// 0 inside its bounds), match at least 95 % of the messages, and leave no
// receive before its send. Merged plainly, the pair is "same-boot" with
// offset 0. The merged trace keeps every event of both, per host.
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <map>

#include <nlohmann/json.hpp>

#include "tests/integration/fixture.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

constexpr int kRequests = 1000;

std::string target_reqresp() {
  return (std::filesystem::path(Paths::target_kernel).parent_path() / "target_reqresp").string();
}

std::optional<nlohmann::json> info_json(const std::string& file) {
  Result r = run({Paths::atrace, "info", "-i", file, "--format=json"});
  if (!r.exited(0)) {
    ADD_FAILURE() << r.describe();
    return std::nullopt;
  }
  return nlohmann::json::parse(r.out, nullptr, false);
}

class Merge : public IntegrationTest {
 protected:
  // Records the server and the client, each with its own atrace.
  bool record_pair() {
    server_ = file("server.data");
    client_ = file("client.data");
    const std::string fifo = file("fifo");
    if (mkfifo(fifo.c_str(), 0600) != 0) {
      ADD_FAILURE() << "mkfifo " << fifo;
      return false;
    }
    const std::string n = std::to_string(kRequests);
    Child server({Paths::atrace, "record", "-o", server_, "--kernel=+net", "--filter=off",
                  "--select=serve_request,read_fifo", "--", target_reqresp(), "server", "0", n,
                  fifo});
    auto ready = server.wait_for_line("ready port=", scaled(milliseconds(30000)));
    if (!ready) {
      ADD_FAILURE() << "the server did not start: " << server.wait(milliseconds(1000)).describe();
      return false;
    }
    const std::string port = ready->substr(ready->find('=') + 1);
    Result client = run({Paths::atrace, "record", "-o", client_, "--kernel=+net", "--filter=off",
                         "--select=send_request,write_fifo", "--", target_reqresp(), "client",
                         "127.0.0.1", port, n, fifo},
                        scaled(milliseconds(120000)));
    Result s = server.wait(scaled(milliseconds(60000)));
    EXPECT_TRUE(client.exited(0)) << client.describe();
    EXPECT_TRUE(s.exited(0)) << s.describe();
    return client.exited(0) && s.exited(0);
  }
  Result merge(const std::string& out, std::vector<std::string> extra = {}) {
    std::vector<std::string> argv = {Paths::atrace, "merge", client_, server_, "-o", out};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return run(argv, scaled(milliseconds(60000)));
  }
  std::string server_, client_;
};

TEST_F(Merge, SameHostRecordingsEstimatedAsOneClock) {
  ASSERT_TRUE(record_pair());
  const std::string merged = file("merged.data");
  Result m = merge(merged, {"--estimate"});
  ASSERT_TRUE(m.exited(0)) << m.describe();
  auto info = info_json(merged);
  ASSERT_TRUE(info && !info->is_discarded());
  ASSERT_TRUE(info->contains("sync")) << info->dump(2);
  const auto& sync = (*info)["sync"];
  ASSERT_EQ(sync["hosts"].size(), 2u);
  EXPECT_TRUE(sync["estimated"].get<bool>());
  ASSERT_EQ(sync["pairs"].size(), 1u) << sync.dump(2);
  const auto& p = sync["pairs"][0];
  EXPECT_EQ(p["method"], "messages") << p.dump(2);
  // 1000 requests, 1000 answers, 1000 pipe messages: one-way messages.
  EXPECT_GE(p["messages"].get<long long>(), 3 * kRequests * 95 / 100) << p.dump(2);
  EXPECT_LE(std::llabs(p["offset_ns"].get<long long>()), 10'000) << p.dump(2);
  ASSERT_FALSE(p["bound_ns"].is_null()) << p.dump(2);
  EXPECT_LE(std::llabs(p["offset_ns"].get<long long>()), p["bound_ns"].get<long long>())
      << "0, the truth, must lie inside the bounds: " << p.dump(2);
  EXPECT_EQ(p["quality"], "ACCURATE") << p.dump(2);
  EXPECT_EQ(p["violations_after"].get<long long>(), 0) << p.dump(2);
  EXPECT_GE(sync["messages"].get<long long>(), 3 * kRequests * 95 / 100);

  // Every event of both recordings, each under its host.
  auto report = report_json(merged);
  ASSERT_TRUE(report);
  EXPECT_EQ(calls_of(*report, "send_request"), kRequests);
  EXPECT_EQ(calls_of(*report, "serve_request"), kRequests);
  EXPECT_EQ(calls_of(*report, "write_fifo"), kRequests);
  EXPECT_EQ(calls_of(*report, "read_fifo"), kRequests);
  // One host of the two: --host by number (the order merge was given).
  auto server_only = report_json(merged, {"--host=1"});
  ASSERT_TRUE(server_only);
  EXPECT_EQ(calls_of(*server_only, "serve_request"), kRequests);
  EXPECT_EQ(calls_of(*server_only, "read_fifo"), kRequests);
  EXPECT_EQ(find_function(*server_only, "send_request"), nullptr);
  auto client_info = info_json(client_);
  auto server_info = info_json(server_);
  ASSERT_TRUE(client_info && server_info);
  EXPECT_EQ((*info)["events"].get<long long>(),
            (*client_info)["events"].get<long long>() + (*server_info)["events"].get<long long>());
}

// The flow graph of the merged trace (docs/flows.md): the messages between
// the two recordings are edges between their functions and hosts.
TEST_F(Merge, FlowsGoFromOneRecordingToTheOther) {
  ASSERT_TRUE(record_pair());
  const std::string merged = file("merged.data");
  Result m = merge(merged);
  ASSERT_TRUE(m.exited(0)) << m.describe();
  auto rep = report_json(merged, {"--flows"});
  ASSERT_TRUE(rep);
  std::map<std::pair<std::string, std::string>, std::pair<long long, long long>> bytes;
  for (const auto& e : (*rep)["flows"])
    if (e["kind"] == "bytes") {
      auto& b = bytes[{e["from"].get<std::string>(), e["to"].get<std::string>()}];
      b.first += e["count"].get<long long>();
      b.second += e["bytes"].get<long long>();
    }
  using P = std::pair<long long, long long>;
  EXPECT_EQ((bytes[{"send_request", "serve_request"}]), (P{kRequests, kRequests * 64LL}))
      << rep->dump(1);
  EXPECT_EQ((bytes[{"serve_request", "send_request"}]), (P{kRequests, kRequests * 128LL}));
  EXPECT_EQ((bytes[{"write_fifo", "read_fifo"}]), (P{kRequests, kRequests * 16LL}));
  // Per host: the two recordings, every byte between them.
  auto hosts = report_json(merged, {"--flows=host"});
  ASSERT_TRUE(hosts);
  long long across = 0;
  for (const auto& e : (*hosts)["flows"])
    if (e["kind"] == "bytes" && e["from_node"] != e["to_node"])
      across += e["bytes"].get<long long>();
  EXPECT_EQ(across, kRequests * (64LL + 128 + 16)) << hosts->dump(1);
  EXPECT_EQ((*hosts)["flow_graph"]["nodes"].size(), 2u);
}

TEST_F(Merge, OneBootMergesWithOffsetZero) {
  ASSERT_TRUE(record_pair());
  const std::string merged = file("merged.data");
  Result m = merge(merged);
  ASSERT_TRUE(m.exited(0)) << m.describe();
  auto info = info_json(merged);
  ASSERT_TRUE(info && info->contains("sync"));
  const auto& pairs = (*info)["sync"]["pairs"];
  ASSERT_GE(pairs.size(), 1u);
  bool same_boot = false;
  for (const auto& p : pairs) {
    if (p["method"] != "same-boot") continue;
    same_boot = true;
    EXPECT_EQ(p["offset_ns"].get<long long>(), 0);
    EXPECT_EQ(p["bound_ns"].get<long long>(), 0);
    EXPECT_EQ(p["violations_after"].get<long long>(), 0) << p.dump(2);
  }
  EXPECT_TRUE(same_boot) << pairs.dump(2);
  // The text report says the same.
  Result text = run({Paths::atrace, "info", "-i", merged});
  ASSERT_TRUE(text.exited(0)) << text.describe();
  EXPECT_NE(text.out.find("Clock sync:"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("same-boot"), std::string::npos) << text.out;
}

TEST_F(Merge, BadInputIsOneLineAndNoFile) {
  const std::string out = file("out.data");
  Result one = run({Paths::atrace, "merge", file("missing.data"), "-o", out});
  expect_one_error_line(one);
  EXPECT_FALSE(std::filesystem::exists(out));
  ASSERT_TRUE(record_pair());
  Result single = run({Paths::atrace, "merge", client_, "-o", out});
  expect_one_error_line(single);
  EXPECT_FALSE(std::filesystem::exists(out));
  const std::string merged = file("merged.data");
  ASSERT_TRUE(merge(merged).exited(0));
  Result again = run({Paths::atrace, "merge", merged, client_, "-o", out});
  EXPECT_NE(expect_one_error_line(again).find("already a merged trace"), std::string::npos)
      << again.describe();
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace atrace::it
