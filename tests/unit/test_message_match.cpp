// analysis/message_match: which send each receive received, on constructed
// ends whose pairing is known byte for byte.
#include "analysis/message_match.h"
#include "analysis/message_stats.h"

#include <gtest/gtest.h>

#include <cstring>

namespace atrace::analysis {
namespace {

using formats::NetProto;

constexpr uint16_t kClientPort = 40000, kServerPort = 8080;

// A TCP or UDP end of ip4 a:ap <-> b:bp, as the socket at `a` sees it.
MessageEnd inet(NetProto proto, bool recv, uint32_t a, uint16_t ap, uint32_t b, uint16_t bp,
                uint64_t seq, uint64_t bytes, uint64_t ts, uint32_t machine = 0) {
  MessageEnd e;
  e.machine = machine;
  e.host = static_cast<uint16_t>(machine);
  e.ts = ts;
  e.m.recv = recv;
  e.m.proto = proto;
  e.m.family = 4;
  uint8_t la[4] = {uint8_t(a >> 24), uint8_t(a >> 16), uint8_t(a >> 8), uint8_t(a)};
  uint8_t pa[4] = {uint8_t(b >> 24), uint8_t(b >> 16), uint8_t(b >> 8), uint8_t(b)};
  std::memcpy(e.m.laddr, la, 4);
  std::memcpy(e.m.paddr, pa, 4);
  e.m.lport = ap, e.m.pport = bp;
  e.m.seq = seq, e.m.bytes = bytes;
  return e;
}

constexpr uint32_t kLoopback = 0x7f000001, kHostA = 0x0a000001, kHostB = 0x0a000002;

// Client (at a) to server (at b) and the server's receive of it.
MessageEnd tcp_send(uint64_t seq, uint64_t bytes, uint64_t ts, uint32_t machine = 0,
                    uint32_t a = kLoopback, uint32_t b = kLoopback) {
  return inet(NetProto::Tcp, false, a, kClientPort, b, kServerPort, seq, bytes, ts, machine);
}
MessageEnd tcp_recv(uint64_t seq, uint64_t bytes, uint64_t ts, uint32_t machine = 0,
                    uint32_t a = kLoopback, uint32_t b = kLoopback) {
  return inet(NetProto::Tcp, true, b, kServerPort, a, kClientPort, seq, bytes, ts, machine);
}

MessageEnd local(NetProto proto, bool recv, uint64_t obj, uint64_t peer, uint64_t offset,
                 uint64_t bytes, uint64_t ts, uint32_t machine = 0) {
  MessageEnd e;
  e.machine = machine;
  e.ts = ts;
  e.m.recv = recv;
  e.m.proto = proto;
  e.m.obj = obj, e.m.peer_obj = peer;
  e.m.seq = offset, e.m.bytes = bytes;
  return e;
}

struct Pair {
  size_t send, recv;
  uint64_t bytes;
  bool operator==(const Pair&) const = default;
};
std::ostream& operator<<(std::ostream& os, const Pair& p) {
  return os << "{send " << p.send << ", recv " << p.recv << ", " << p.bytes << " B}";
}

std::vector<Pair> pairs(const std::vector<MessageEnd>& ends) {
  std::vector<Pair> out;
  for (const MessageMatch& m : match_messages(ends)) out.push_back({m.send, m.recv, m.bytes});
  return out;
}

TEST(MessageMatch, TcpSegmentSplitOverTwoReceives) {
  std::vector<MessageEnd> ends = {tcp_send(1000, 100, 10), tcp_recv(1000, 60, 20),
                                  tcp_recv(1060, 40, 30)};
  EXPECT_EQ(pairs(ends), (std::vector<Pair>{{0, 1, 60}, {0, 2, 40}}));
}

TEST(MessageMatch, TcpCoalescedReceiveTakesTheLastSend) {
  // Two sends read by one receive: it is after both, the later is the
  // tighter bound.
  std::vector<MessageEnd> ends = {tcp_send(1000, 100, 10), tcp_send(1100, 100, 20),
                                  tcp_recv(1000, 200, 30)};
  EXPECT_EQ(pairs(ends), (std::vector<Pair>{{1, 2, 100}}));
}

TEST(MessageMatch, TcpDirectionAndPortsMustAgree) {
  std::vector<MessageEnd> ends = {
      tcp_send(1000, 100, 10),
      // The same range the other way (the server's answer, received by
      // the client): its own channel, no send of it here.
      inet(NetProto::Tcp, true, kLoopback, kClientPort, kLoopback, kServerPort, 1000, 100, 20),
      // Another connection from another client port.
      inet(NetProto::Tcp, true, kLoopback, kServerPort, kLoopback, kClientPort + 1, 1000, 100, 30),
      // A receive of bytes never sent in the trace.
      tcp_recv(5000, 10, 40)};
  EXPECT_TRUE(pairs(ends).empty());
}

TEST(MessageMatch, TcpSequenceWrapsAround) {
  // The first send crosses 2^32: [2^32 - 64, 2^32 + 36).
  std::vector<MessageEnd> ends = {tcp_send(0xFFFFFFC0u, 100, 10), tcp_send(36, 100, 20),
                                  tcp_recv(0xFFFFFFC0u, 64, 15), tcp_recv(0, 136, 25)};
  EXPECT_EQ(pairs(ends), (std::vector<Pair>{{0, 2, 64}, {1, 3, 100}}));
  // Receives seen only after the wrap still find their sends.
  std::vector<MessageEnd> late = {tcp_send(0xFFFFFFC0u, 100, 10), tcp_send(36, 100, 20),
                                  tcp_recv(0, 36, 15), tcp_recv(36, 100, 25)};
  EXPECT_EQ(pairs(late), (std::vector<Pair>{{0, 2, 36}, {1, 3, 100}}));
}

TEST(MessageMatch, TcpLongStreamWrapsManyTimes) {
  // 100,000 sends of 64 KiB (6.5 GB: the sequence wraps once per 65,536
  // sends), each read by two receives of 32 KiB.
  constexpr uint64_t kSends = 100000, kSize = 65536, kStart = 0xFFFF0000u;
  std::vector<MessageEnd> ends;
  for (uint64_t i = 0; i < kSends; i++) {
    uint64_t seq = (kStart + i * kSize) & 0xFFFFFFFFu;
    ends.push_back(tcp_send(seq, kSize, 10 * i));
    ends.push_back(tcp_recv(seq, kSize / 2, 10 * i + 5));
    ends.push_back(tcp_recv((seq + kSize / 2) & 0xFFFFFFFFu, kSize / 2, 10 * i + 6));
  }
  auto matched = match_messages(ends);
  ASSERT_EQ(matched.size(), 2 * kSends);
  for (size_t k = 0; k < matched.size(); k++) {
    EXPECT_EQ(matched[k].recv, 3 * (k / 2) + 1 + k % 2);
    EXPECT_EQ(matched[k].send, 3 * (k / 2));
    EXPECT_EQ(matched[k].bytes, kSize / 2);
  }
}

TEST(MessageMatch, LoopbackPairsOnlyWithinOneMachine) {
  // Two machines, both talking over 127.0.0.1 with the same ports and
  // sequence numbers: each receive is of its own machine's send.
  std::vector<MessageEnd> ends = {tcp_send(1000, 100, 10, 0), tcp_send(1000, 100, 11, 1),
                                  tcp_recv(1000, 100, 20, 1), tcp_recv(1000, 100, 21, 0)};
  EXPECT_EQ(pairs(ends), (std::vector<Pair>{{1, 2, 100}, {0, 3, 100}}));
  // Machine 1 alone received: nothing of machine 0's is its.
  std::vector<MessageEnd> other = {tcp_send(1000, 100, 10, 0), tcp_recv(1000, 100, 20, 1)};
  EXPECT_TRUE(pairs(other).empty());
}

TEST(MessageMatch, RealAddressesPairAcrossMachines) {
  // 10.0.0.1 (machine 0) to 10.0.0.2 (machine 1): one connection, two
  // clocks; the pairing does not look at time stamps.
  std::vector<MessageEnd> ends = {tcp_send(7, 100, 5000, 0, kHostA, kHostB),
                                  tcp_recv(7, 100, 10, 1, kHostA, kHostB)};
  EXPECT_EQ(pairs(ends), (std::vector<Pair>{{0, 1, 100}}));
}

TEST(MessageMatch, Ipv4MappedAddressesNameTheSameEnd) {
  MessageEnd send = tcp_send(7, 100, 10, 0, kHostA, kHostB);
  MessageEnd recv = tcp_recv(7, 100, 20, 1, kHostA, kHostB);
  // The receiver's socket is IPv6: ::ffff:10.0.0.2 <- ::ffff:10.0.0.1.
  recv.m.family = 6;
  uint8_t l[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 2};
  uint8_t p[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1};
  std::memcpy(recv.m.laddr, l, 16);
  std::memcpy(recv.m.paddr, p, 16);
  EXPECT_EQ(pairs({send, recv}), (std::vector<Pair>{{0, 1, 100}}));
}

TEST(MessageMatch, UdpInOrderBySizeSkippingALostDatagram) {
  auto send = [](uint64_t bytes, uint64_t ts) {
    return inet(NetProto::Udp, false, kLoopback, kClientPort, kLoopback, kServerPort, 0, bytes, ts);
  };
  auto recv = [](uint64_t bytes, uint64_t ts) {
    return inet(NetProto::Udp, true, kLoopback, kServerPort, kLoopback, kClientPort, 0, bytes, ts);
  };
  // 51 bytes lost; the last datagram of 50 lost too.
  std::vector<MessageEnd> ends = {send(50, 10), send(51, 20), send(52, 30),
                                  send(50, 40), recv(50, 15), recv(52, 35)};
  EXPECT_EQ(pairs(ends), (std::vector<Pair>{{0, 4, 50}, {2, 5, 52}}));
}

TEST(MessageMatch, UdpWildcardAddressesPairByPorts) {
  constexpr uint32_t kAny = 0;
  // A client socket never bound sends from 0.0.0.0 to a server bound to
  // 0.0.0.0: each end names only the other's real address.
  auto send = [](uint32_t to, uint64_t ts, uint32_t machine) {
    return inet(NetProto::Udp, false, kAny, kClientPort, to, kServerPort, 0, 50, ts, machine);
  };
  auto recv = [](uint32_t from, uint64_t ts, uint32_t machine) {
    return inet(NetProto::Udp, true, kAny, kServerPort, from, kClientPort, 0, 50, ts, machine);
  };
  // Over loopback on one machine; machine 1's loopback datagram is its own.
  EXPECT_EQ(pairs({send(kLoopback, 10, 0), recv(kLoopback, 20, 0), recv(kLoopback, 30, 1)}),
            (std::vector<Pair>{{0, 1, 50}}));
  // Between two machines: 10.0.0.1 (machine 0) to 10.0.0.2 (machine 1).
  EXPECT_EQ(pairs({send(kHostB, 10, 0), recv(kHostA, 5, 1)}), (std::vector<Pair>{{0, 1, 50}}));
}

TEST(MessageMatch, UdpOnOneMachineNotBeforeTheSendEntered) {
  auto send = [](uint64_t ts, uint64_t call_ns) {
    MessageEnd e =
        inet(NetProto::Udp, false, kLoopback, kClientPort, kLoopback, kServerPort, 0, 50, ts);
    e.m.call_ns = call_ns;
    return e;
  };
  MessageEnd recv =
      inet(NetProto::Udp, true, kLoopback, kServerPort, kLoopback, kClientPort, 0, 50, 100);
  // Entered at 90, returned at 120 after the receiver woke: it.
  EXPECT_EQ(pairs({send(120, 30), recv}), (std::vector<Pair>{{0, 1, 50}}));
  // Entered at 110, after the receive returned: not it.
  EXPECT_TRUE(pairs({send(120, 10), recv}).empty());
}

TEST(MessageMatch, UnixStreamByObjectsSwappedAndOffsets) {
  // Socket 5's peer is 6. 5 sends 30 + 30; 6 reads 40 + 20. 6 answers 40.
  std::vector<MessageEnd> ends = {
      local(NetProto::UnixStream, false, 5, 6, 0, 30, 10),
      local(NetProto::UnixStream, false, 5, 6, 30, 30, 20),
      local(NetProto::UnixStream, true, 6, 5, 0, 40, 25),
      local(NetProto::UnixStream, true, 6, 5, 40, 20, 30),
      local(NetProto::UnixStream, false, 6, 5, 0, 40, 40),
      local(NetProto::UnixStream, true, 5, 6, 0, 40, 50),
      // Offset unknown: nothing to pair by.
      local(NetProto::UnixStream, true, 6, 5, 60, 10, 60),
  };
  ends.back().m.offset_known = false;
  EXPECT_EQ(pairs(ends), (std::vector<Pair>{{1, 2, 10}, {1, 3, 20}, {4, 5, 40}}));
}

TEST(MessageMatch, PipesByInodeWithinOneMachine) {
  // Pipe inode 77 on machine 0 and another pipe that happens to have
  // inode 77 on machine 1.
  std::vector<MessageEnd> ends = {
      local(NetProto::Pipe, false, 77, 0, 0, 10, 10, 0),
      local(NetProto::Pipe, false, 77, 0, 0, 10, 11, 1),
      local(NetProto::Pipe, true, 77, 0, 0, 10, 20, 0),
      local(NetProto::Pipe, false, 77, 0, 10, 10, 30, 0),
      local(NetProto::Pipe, true, 77, 0, 10, 10, 40, 0),
      // Machine 1's reader got its machine's bytes.
      local(NetProto::Pipe, true, 77, 0, 0, 10, 50, 1),
  };
  EXPECT_EQ(pairs(ends), (std::vector<Pair>{{0, 2, 10}, {3, 4, 10}, {1, 5, 10}}));
}

TEST(MessageMatch, HostsOfOneBootAreOneMachine) {
  std::vector<formats::HostClocks> hosts(4);
  hosts[0].boot_id = "a";
  hosts[1].boot_id = "b";
  hosts[2].boot_id = "a";  // two recordings on machine "a"
  // hosts[3]: unknown boot id, its own
  EXPECT_EQ(host_machines(hosts), (std::vector<uint32_t>{0, 1, 0, 3}));
}

}  // namespace
}  // namespace atrace::analysis

namespace atrace::analysis {
namespace {

// A Message event of a TCP end (as MessageTable gets them from the replay).
formats::Event tcp_event(bool recv, uint64_t seq, uint64_t bytes, uint64_t ts, uint32_t pid) {
  formats::Event ev;
  ev.kind = formats::EventKind::Message;
  ev.ts = ts;
  ev.pid = ev.tid = pid;
  MessageEnd e = recv ? tcp_recv(seq, bytes, ts) : tcp_send(seq, bytes, ts);
  formats::set_net_message(ev, e.m);
  return ev;
}

TEST(MessageMatch, TableLatencyIsMeasuredOnlyOnMatchedMessages) {
  MessageTable table;
  // Function 1 sends 100 requests; function 2 receives 99 of them, the
  // k-th (k = 1..99) k us after it left; the 100th is never received.
  for (uint64_t k = 1; k <= 100; k++) {
    const uint64_t sent_at = k * 1000000;
    table.add(1, tcp_event(false, 100 * k, 100, sent_at, 10));
    if (k < 100) table.add(2, tcp_event(true, 100 * k, 100, sent_at + k * 1000, 20));
  }
  // A receive of bytes no traced send had: unmatched, no latency.
  table.add(3, tcp_event(true, 1000000, 10, 5, 20));
  auto rows = table.rows();
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].key, 1u);
  EXPECT_EQ(rows[0].sent, 100u);
  EXPECT_EQ(rows[0].sent_matched, 99u);
  EXPECT_EQ(rows[0].latencies, 99u);
  // Nearest rank over 1..99 us: the 50th and the 99th (ceil(0.99 * 99) = 99).
  EXPECT_EQ(rows[0].latency_p50_ns, 50000);
  EXPECT_EQ(rows[0].latency_p99_ns, 99000);
  EXPECT_EQ(rows[1].key, 2u);
  EXPECT_EQ(rows[1].received_matched, 99u);
  EXPECT_EQ(rows[1].latency_p50_ns, 50000);
  EXPECT_EQ(rows[2].key, 3u);
  EXPECT_EQ(rows[2].received, 1u);
  EXPECT_EQ(rows[2].received_matched, 0u);
  EXPECT_EQ(rows[2].latencies, 0u);
}

}  // namespace
}  // namespace atrace::analysis
