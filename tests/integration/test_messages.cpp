// Messages (record --kernel=+net, issue 32) on the real kernel:
// target_messages makes exactly N request/answer exchanges over TCP on
// 127.0.0.1 and [::1], UDP, a unix socketpair and a pair of pipes, between
// a client and its forked server, both recorded in one trace
// (--follow-forks). The report must count every message and byte per
// function and peer, and a TCP send and the receive of the same bytes must
// carry the same sequence range.
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "tests/integration/fixture.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

constexpr long long kN = 100;

// Built beside target_kernel (tests/targets/CMakeLists.txt).
std::string target_messages() {
  return (std::filesystem::path(Paths::target_kernel).parent_path() / "target_messages").string();
}

// One message line of `atrace script --fields=pid,details`:
// "PID send tcp 127.0.0.1:A -> 127.0.0.1:B bytes=100 seq=S-E".
struct Msg {
  unsigned pid = 0;
  std::string dir, proto, local, peer;
  long long bytes = -1;
  std::string seq, offset;
};

std::vector<Msg> parse_messages(const std::string& out) {
  std::vector<Msg> v;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream w(line);
    Msg m;
    std::string tok;
    if (!(w >> m.pid >> m.dir >> m.proto >> m.local)) continue;
    while (w >> tok) {
      if (tok == "->" || tok == "<-") w >> m.peer;
      else if (tok.rfind("bytes=", 0) == 0) m.bytes = std::stoll(tok.substr(6));
      else if (tok.rfind("seq=", 0) == 0) m.seq = tok.substr(4);
      else if (tok.rfind("offset=", 0) == 0) m.offset = tok.substr(7);
    }
    v.push_back(std::move(m));
  }
  return v;
}

// "key=value" lines the target printed.
long long printed(const std::string& out, const std::string& key) {
  auto at = out.find(key + "=");
  return at == std::string::npos ? -1 : std::stoll(out.substr(at + key.size() + 1));
}

class Messages : public IntegrationTest {
 protected:
  // Records the eight functions with the net group, the server followed
  // into its fork.
  bool record_target(const std::vector<std::string>& extra = {"--kernel=+net", "--follow-forks"}) {
    trace_ = file("m.data");
    run_ = record(trace_,
                  "tcp_client,tcp_server,udp_client,udp_server,unix_client,unix_server,"
                  "pipe_client,pipe_server",
                  {target_messages(), std::to_string(kN), tag_arg()}, extra);
    if (!run_.exited(0)) {
      ADD_FAILURE() << run_.describe();
      return false;
    }
    return true;
  }
  std::vector<Msg> script_messages() {
    Result s =
        run({Paths::atrace, "script", "-i", trace_, "--kind=message", "--fields=pid,details"});
    EXPECT_TRUE(s.exited(0)) << s.describe();
    return parse_messages(s.out);
  }
  // The messages rows of `function` over `protocol`.
  static std::vector<nlohmann::json> rows(const nlohmann::json& rep, const std::string& function,
                                          const std::string& protocol) {
    std::vector<nlohmann::json> out;
    for (const auto& r : rep["messages"])
      if (base_name(r["function"].get<std::string>()) == function && r["protocol"] == protocol)
        out.push_back(r);
    return out;
  }
  static void expect_row(const nlohmann::json& r, long long sent, long long sent_bytes,
                         long long received, long long received_bytes) {
    EXPECT_EQ(r["sent"], sent) << r.dump();
    EXPECT_EQ(r["sent_bytes"], sent_bytes) << r.dump();
    EXPECT_EQ(r["received"], received) << r.dump();
    EXPECT_EQ(r["received_bytes"], received_bytes) << r.dump();
  }

  Result run_;
  std::string trace_;
};

TEST_F(Messages, ReportCountsEveryMessageAndBytePerFunctionAndPeer) {
  ASSERT_TRUE(record_target());
  const long long port4 = printed(run_.out, "tcp4_port"), port6 = printed(run_.out, "tcp6_port");
  const long long udp_server = printed(run_.out, "udp_server_port");
  const long long udp_client = printed(run_.out, "udp_client_port");
  auto rep = report_json(trace_);
  ASSERT_TRUE(rep);
  ASSERT_TRUE(rep->contains("messages")) << rep->dump(1);
  EXPECT_EQ((*rep)["lost_events"], 0);
  EXPECT_EQ((*rep)["kernel_events"], "sched,faults,proc,net");

  // TCP: one row per connection and side, the peer by address and port.
  auto client = rows(*rep, "tcp_client", "tcp");
  ASSERT_EQ(client.size(), 2u) << rep->dump(1);
  std::set<std::string> peers;
  for (const auto& r : client) {
    peers.insert(r["peer"].get<std::string>());
    expect_row(r, kN, kN * 100, kN, kN * 200);
  }
  EXPECT_EQ(peers, (std::set<std::string>{"127.0.0.1:" + std::to_string(port4),
                                          "[::1]:" + std::to_string(port6)}));
  auto server = rows(*rep, "tcp_server", "tcp");
  ASSERT_EQ(server.size(), 2u) << rep->dump(1);
  for (const auto& r : server) expect_row(r, kN, kN * 200, kN, kN * 100);

  // UDP: the datagrams' own addresses (sendto, recvfrom).
  auto uc = rows(*rep, "udp_client", "udp");
  ASSERT_EQ(uc.size(), 1u) << rep->dump(1);
  EXPECT_EQ(uc[0]["peer"], "127.0.0.1:" + std::to_string(udp_server));
  expect_row(uc[0], kN, kN * 50, kN, kN * 60);
  auto us = rows(*rep, "udp_server", "udp");
  ASSERT_EQ(us.size(), 1u) << rep->dump(1);
  EXPECT_EQ(us[0]["peer"], "127.0.0.1:" + std::to_string(udp_client));
  expect_row(us[0], kN, kN * 60, kN, kN * 50);

  // The socketpair: each end's peer is the other socket.
  auto xc = rows(*rep, "unix_client", "unix");
  auto xs = rows(*rep, "unix_server", "unix");
  ASSERT_EQ(xc.size(), 1u) << rep->dump(1);
  ASSERT_EQ(xs.size(), 1u) << rep->dump(1);
  expect_row(xc[0], kN, kN * 30, kN, kN * 40);
  expect_row(xs[0], kN, kN * 40, kN, kN * 30);
  EXPECT_NE(xc[0]["peer"], xs[0]["peer"]);

  // Two pipes, one each way: a row per pipe.
  auto pc = rows(*rep, "pipe_client", "pipe");
  auto ps = rows(*rep, "pipe_server", "pipe");
  ASSERT_EQ(pc.size(), 2u) << rep->dump(1);
  ASSERT_EQ(ps.size(), 2u) << rep->dump(1);
  long long client_sent = 0, client_received = 0, server_sent = 0, server_received = 0;
  for (const auto& r : pc) {
    client_sent += r["sent_bytes"].get<long long>();
    client_received += r["received_bytes"].get<long long>();
  }
  for (const auto& r : ps) {
    server_sent += r["sent_bytes"].get<long long>();
    server_received += r["received_bytes"].get<long long>();
  }
  EXPECT_EQ(client_sent, kN * 10);
  EXPECT_EQ(server_received, kN * 10);
  EXPECT_EQ(client_received, kN);
  EXPECT_EQ(server_sent, kN);
}

// The evidence `atrace merge` pairs by: a TCP send's [seq, end) is the
// receive's of the same bytes, on each connection, in each direction.
TEST_F(Messages, TcpSendAndReceiveOfTheSameBytesCarryTheSameSequenceRange) {
  ASSERT_TRUE(record_target());
  auto msgs = script_messages();
  using Key = std::tuple<std::string, std::string, std::string>;  // from, to, seq range
  std::multiset<Key> sent, received;
  std::map<std::string, long long> sends_per_flow;
  for (const auto& m : msgs) {
    if (m.proto != "tcp") continue;
    ASSERT_FALSE(m.seq.empty()) << m.local;
    if (m.dir == "send") {
      sent.insert({m.local, m.peer, m.seq});
      sends_per_flow[m.local + ">" + m.peer]++;
    } else {
      received.insert({m.peer, m.local, m.seq});
    }
  }
  EXPECT_EQ(sent.size(), 4u * kN);  // 2 connections, 2 directions
  EXPECT_EQ(sent, received);
  ASSERT_EQ(sends_per_flow.size(), 4u);
  for (const auto& [flow, n] : sends_per_flow) EXPECT_EQ(n, kN) << flow;

  // Each side's sends follow each other in the stream: one's end is the
  // next one's start.
  std::map<std::string, std::string> last_end;
  for (const auto& m : msgs) {
    if (m.proto != "tcp" || m.dir != "send") continue;
    const std::string flow = m.local + ">" + m.peer;
    const auto dash = m.seq.find('-');
    ASSERT_NE(dash, std::string::npos) << m.seq;
    const long long start = std::stoll(m.seq.substr(0, dash));
    const long long end = std::stoll(m.seq.substr(dash + 1));
    EXPECT_EQ((end - start + (1ll << 32)) % (1ll << 32), m.bytes) << m.seq;
    if (auto it = last_end.find(flow); it != last_end.end()) {
      EXPECT_EQ(it->second, m.seq.substr(0, dash)) << flow;
    }
    last_end[flow] = m.seq.substr(dash + 1);
  }
}

// Local channels are named by their kernel objects: a socketpair's two
// inodes, each the other's peer; a pipe's inode on both ends; and each
// direction's byte offsets match between the writer and the reader.
TEST_F(Messages, LocalChannelsNameTheirKernelObjectsAndOffsets) {
  ASSERT_TRUE(record_target());
  auto msgs = script_messages();
  std::multiset<std::tuple<std::string, std::string, std::string>> unix_sent, unix_received;
  std::multiset<std::pair<std::string, std::string>> pipe_written, pipe_read;
  long long unix_msgs = 0, pipe_msgs = 0;
  for (const auto& m : msgs) {
    if (m.proto == "unix") {
      unix_msgs++;
      EXPECT_EQ(m.local.rfind("unix:", 0), 0u) << m.local;
      EXPECT_EQ(m.peer.rfind("unix:", 0), 0u) << m.peer;
      EXPECT_NE(m.local, m.peer);
      if (m.dir == "send") unix_sent.insert({m.local, m.peer, m.offset});
      else unix_received.insert({m.peer, m.local, m.offset});
    } else if (m.proto == "pipe" && (m.bytes == 10 || m.bytes == 1)) {
      pipe_msgs++;
      (m.dir == "send" ? pipe_written : pipe_read).insert({m.local, m.offset});
    }
  }
  EXPECT_EQ(unix_msgs, 4 * kN);
  EXPECT_EQ(unix_sent, unix_received);
  EXPECT_EQ(unix_sent.count({"", "", ""}), 0u);
  // The target's own output (printf to the test's pipe) is not one of the
  // two pipes' 10- and 1-byte messages.
  EXPECT_EQ(pipe_msgs, 4 * kN);
  EXPECT_EQ(pipe_written, pipe_read);
  std::set<std::string> pipes;
  for (const auto& [pipe, offset] : pipe_written) pipes.insert(pipe);
  EXPECT_EQ(pipes.size(), 2u);
}

// Off by default: no program of the group runs, no message is written,
// and the report has no messages table.
TEST_F(Messages, OffByDefault) {
  ASSERT_TRUE(record_target({"--follow-forks"}));
  auto rep = report_json(trace_);
  ASSERT_TRUE(rep);
  EXPECT_EQ((*rep)["kernel_events"], "sched,faults,proc");
  EXPECT_FALSE(rep->contains("messages")) << rep->dump(1);
  EXPECT_TRUE(script_messages().empty());
  EXPECT_EQ(calls_of(*rep, "tcp_client"), 2);
  EXPECT_EQ(calls_of(*rep, "tcp_server"), 2);
}

}  // namespace
}  // namespace atrace::it
