// analysis/message_match on a real recording: target_messages makes
// exactly N request/answer exchanges between a client and its forked
// server over TCP (127.0.0.1 and [::1]), UDP, a unix socketpair and two
// pipes, one message per call, in lockstep. Every receive must pair with
// the one send of its bytes, from the other process, before it.
#include <filesystem>
#include <map>

#include "analysis/analysis.h"
#include "formats/trace_reader.h"
#include "tests/integration/fixture.h"

namespace atrace::it {
namespace {

constexpr long long kN = 100;

std::string target_messages() {
  return (std::filesystem::path(Paths::target_kernel).parent_path() / "target_messages").string();
}

class MessageMatchRecorded : public IntegrationTest {};

TEST_F(MessageMatchRecorded, EveryExchangeOfTargetMessagesIsMatched) {
  const std::string trace = file("m.data");
  Result r = record(trace,
                    "tcp_client,tcp_server,udp_client,udp_server,unix_client,unix_server,"
                    "pipe_client,pipe_server",
                    {target_messages(), std::to_string(kN), tag_arg()},
                    {"--kernel=+net", "--follow-forks"});
  ASSERT_TRUE(r.exited(0)) << r.describe();

  formats::TraceReader reader(trace);
  ASSERT_EQ(reader.lost().total(), 0u);
  const auto machines = analysis::host_machines(reader.hosts());
  std::vector<analysis::MessageEnd> ends;
  formats::Event ev;
  while (reader.next(ev))
    if (ev.kind == formats::EventKind::Message) ends.push_back(analysis::message_end(ev, machines));
  const auto matched = analysis::match_messages(ends);

  // Receives per protocol, and those matched, with their bytes.
  std::map<formats::NetProto, long long> received, paired, paired_bytes, received_bytes;
  for (const auto& e : ends)
    if (e.m.recv) {
      received[e.m.proto]++;
      received_bytes[e.m.proto] += static_cast<long long>(e.m.bytes);
    }
  for (const auto& m : matched) {
    const auto& s = ends[m.send];
    const auto& v = ends[m.recv];
    ASSERT_FALSE(s.m.recv);
    ASSERT_TRUE(v.m.recv);
    EXPECT_EQ(s.m.proto, v.m.proto);
    // Lockstep: one send per receive, all of its bytes.
    EXPECT_EQ(m.bytes, v.m.bytes);
    EXPECT_EQ(s.m.bytes, v.m.bytes);
    // Client and server are two processes; one clock: the send entered
    // its call before the receive returned.
    EXPECT_NE(s.pid, v.pid);
    EXPECT_LE(s.ts - s.m.call_ns, v.ts);
    paired[v.m.proto]++;
    paired_bytes[v.m.proto] += static_cast<long long>(m.bytes);
  }
  using formats::NetProto;
  // TCP: 2 connections, requests and answers.
  EXPECT_EQ(received[NetProto::Tcp], 4 * kN);
  EXPECT_EQ(paired[NetProto::Tcp], 4 * kN);
  EXPECT_EQ(paired_bytes[NetProto::Tcp], 2 * kN * (100 + 200));
  EXPECT_EQ(received[NetProto::Udp], 2 * kN);
  EXPECT_EQ(paired[NetProto::Udp], 2 * kN);
  EXPECT_EQ(paired_bytes[NetProto::Udp], kN * (50 + 60));
  EXPECT_EQ(received[NetProto::UnixStream], 2 * kN);
  EXPECT_EQ(paired[NetProto::UnixStream], 2 * kN);
  EXPECT_EQ(paired_bytes[NetProto::UnixStream], kN * (30 + 40));
  EXPECT_EQ(received[NetProto::Pipe], 2 * kN);
  EXPECT_EQ(paired[NetProto::Pipe], 2 * kN);
  EXPECT_EQ(paired_bytes[NetProto::Pipe], kN * (10 + 1));
  EXPECT_EQ(matched.size(), static_cast<size_t>(10 * kN));
}

}  // namespace
}  // namespace atrace::it
