#include "analysis/message_match.h"

#include <algorithm>
#include <array>
#include <compare>
#include <cstring>
#include <numeric>
#include <tuple>
#include <unordered_map>

namespace atrace::analysis {
namespace {

using formats::NetMessage;
using formats::NetProto;

// How a channel's ends pair up.
enum class Pairing : uint8_t { Bytes, Order };

// One direction of one connection, socket pair or pipe, named the same
// from the send and from the receive.
struct Channel {
  uint8_t proto = 0;
  uint32_t machine = 0;  // kGlobal: not scoped by machine
  std::array<uint8_t, 16> from_addr{}, to_addr{};
  uint16_t from_port = 0, to_port = 0;
  uint64_t from_obj = 0, to_obj = 0;
  auto operator<=>(const Channel&) const = default;
};

struct ChannelHash {
  size_t operator()(const Channel& c) const {
    // FNV-1a over the fields (not the bytes: the struct has padding).
    uint64_t h = 1469598103934665603ull;
    auto mix = [&h](uint64_t v) {
      for (int i = 0; i < 8; i++) h = (h ^ ((v >> (8 * i)) & 0xff)) * 1099511628211ull;
    };
    mix(c.proto), mix(c.machine), mix(c.from_port), mix(c.to_port);
    mix(c.from_obj), mix(c.to_obj);
    for (size_t i = 0; i < 16; i += 8) {
      uint64_t a = 0, b = 0;
      std::memcpy(&a, c.from_addr.data() + i, 8);
      std::memcpy(&b, c.to_addr.data() + i, 8);
      mix(a), mix(b);
    }
    return static_cast<size_t>(h);
  }
};

constexpr uint32_t kGlobal = UINT32_MAX;

// An inet address as 16 bytes, IPv4 as IPv4-mapped IPv6, so a v6 socket
// talking to a v4 one names the same address.
std::array<uint8_t, 16> inet16(const NetMessage& m, const uint8_t (&a)[16]) {
  std::array<uint8_t, 16> out{};
  if (m.family == 4) {
    out[10] = out[11] = 0xff;
    std::memcpy(out.data() + 12, a, 4);
  } else {
    std::memcpy(out.data(), a, 16);
  }
  return out;
}

// Loopback, unspecified: an address that means "this machine" only.
bool machine_local(const std::array<uint8_t, 16>& a) {
  static constexpr std::array<uint8_t, 12> kMapped{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  bool mapped = std::equal(kMapped.begin(), kMapped.end(), a.begin());
  if (mapped) {
    uint32_t v4 = uint32_t{a[12]} << 24 | uint32_t{a[13]} << 16 | uint32_t{a[14]} << 8 | a[15];
    return a[12] == 127 || v4 == 0;
  }
  bool zero_head = std::all_of(a.begin(), a.begin() + 15, [](uint8_t b) { return b == 0; });
  return zero_head && (a[15] == 0 || a[15] == 1);  // :: or ::1
}

Channel channel_of(const MessageEnd& e) {
  const NetMessage& m = e.m;
  Channel c;
  c.proto = static_cast<uint8_t>(m.proto);
  if (m.inet()) {
    auto local = inet16(m, m.laddr), peer = inet16(m, m.paddr);
    // Talking to oneself by one's own address is as machine-scoped as
    // loopback: another machine may have the same address.
    bool scoped = machine_local(local) || machine_local(peer) || local == peer;
    c.machine = scoped ? e.machine : kGlobal;
    if (m.recv) {
      c.from_addr = peer, c.from_port = m.pport;
      c.to_addr = local, c.to_port = m.lport;
    } else {
      c.from_addr = local, c.from_port = m.lport;
      c.to_addr = peer, c.to_port = m.pport;
    }
    return c;
  }
  c.machine = e.machine;
  if (m.proto == NetProto::Pipe) {
    c.from_obj = m.obj;  // one object; the direction is write -> read
  } else if (m.recv) {
    c.from_obj = m.peer_obj, c.to_obj = m.obj;
  } else {
    c.from_obj = m.obj, c.to_obj = m.peer_obj;
  }
  return c;
}

Pairing pairing_of(const NetMessage& m) {
  return (m.proto == NetProto::Udp || m.proto == NetProto::UnixDgram) ? Pairing::Order
                                                                      : Pairing::Bytes;
}

// Can this end pair at all? Local channels need their objects, streams
// other than TCP their offsets.
bool pairable(const NetMessage& m) {
  switch (m.proto) {
    case NetProto::Tcp:
    case NetProto::Udp: return m.family == 4 || m.family == 6;
    case NetProto::UnixStream: return m.obj && m.peer_obj && m.offset_known;
    case NetProto::UnixDgram: return m.obj && m.peer_obj;
    case NetProto::Pipe: return m.obj && m.offset_known;
  }
  return false;
}

// A byte range of a channel's stream, unwrapped to 64 bits.
struct Range {
  size_t end_index = 0;  // into ends
  int64_t begin = 0, end = 0;
  uint64_t ts = 0;
};

// TCP sequence numbers are 32 bits: unwrap each side's in time order (the
// stream only moves forward, by far less than 2^31 between two calls), and
// place the receives' first range next to the sends' first.
void unwrap_tcp(std::vector<Range>& sends, std::vector<Range>& recvs,
                const std::vector<MessageEnd>& ends) {
  auto unwrap = [&](std::vector<Range>& v) {
    int64_t last = 0;
    uint32_t last_raw = 0;
    for (size_t i = 0; i < v.size(); i++) {
      const NetMessage& m = ends[v[i].end_index].m;
      auto raw = static_cast<uint32_t>(m.seq);
      int64_t at = i == 0 ? raw : last + static_cast<int32_t>(raw - last_raw);
      v[i].begin = at;
      v[i].end = at + static_cast<int64_t>(m.bytes);
      last = at, last_raw = raw;
    }
  };
  unwrap(sends);
  unwrap(recvs);
  if (sends.empty() || recvs.empty()) return;
  auto send0 = static_cast<uint32_t>(ends[sends[0].end_index].m.seq);
  auto recv0 = static_cast<uint32_t>(ends[recvs[0].end_index].m.seq);
  int64_t shift = sends[0].begin + static_cast<int32_t>(recv0 - send0) - recvs[0].begin;
  for (Range& r : recvs) r.begin += shift, r.end += shift;
}

// Each receive's overlapping sends, the last sent of them.
void pair_by_bytes(std::vector<Range> sends, const std::vector<Range>& recvs,
                   std::vector<MessageMatch>& out) {
  std::sort(sends.begin(), sends.end(), [](const Range& a, const Range& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end_index < b.end_index;
  });
  // The largest end among sends[0..i]: lets the backwards walk stop as soon
  // as no earlier send can reach the receive (sends seldom overlap, so the
  // walk is short).
  std::vector<int64_t> max_end(sends.size());
  for (size_t i = 0; i < sends.size(); i++)
    max_end[i] = std::max(sends[i].end, i ? max_end[i - 1] : INT64_MIN);
  for (const Range& r : recvs) {
    if (r.end <= r.begin) continue;
    auto it = std::lower_bound(sends.begin(), sends.end(), r.end,
                               [](const Range& s, int64_t v) { return s.begin < v; });
    const Range* best = nullptr;
    for (size_t j = static_cast<size_t>(it - sends.begin()); j-- > 0 && max_end[j] > r.begin;) {
      const Range& s = sends[j];
      if (s.end <= r.begin) continue;
      if (!best || s.ts > best->ts || (s.ts == best->ts && s.end_index > best->end_index))
        best = &s;
    }
    if (!best) continue;
    uint64_t common =
        static_cast<uint64_t>(std::min(best->end, r.end) - std::max(best->begin, r.begin));
    out.push_back({best->end_index, r.end_index, common});
  }
}

// Datagrams: in order, each receive the next send of its size. On one
// machine (one clock) a send that entered its call after the receive
// returned cannot be it.
void pair_by_order(const std::vector<Range>& sends, const std::vector<Range>& recvs,
                   const std::vector<MessageEnd>& ends, std::vector<MessageMatch>& out) {
  // How far past a lost or unseen datagram to look for the next of a
  // receive's size: bounds the work when sizes never agree.
  constexpr size_t kLookahead = 256;
  size_t next = 0;
  for (const Range& r : recvs) {
    const MessageEnd& re = ends[r.end_index];
    for (size_t j = next; j < sends.size() && j < next + kLookahead; j++) {
      const MessageEnd& se = ends[sends[j].end_index];
      if (se.machine == re.machine && se.ts - std::min(se.ts, se.m.call_ns) > re.ts) break;
      if (se.m.bytes != re.m.bytes) continue;
      out.push_back({sends[j].end_index, r.end_index, re.m.bytes});
      next = j + 1;
      break;
    }
  }
}

// Pairs the ends `which` selects, grouped by `channel` (Channel), adding
// to `out`.
template <typename Select, typename ChannelOf>
void pair_channels(const std::vector<MessageEnd>& ends, Select which, ChannelOf channel,
                   std::vector<MessageMatch>& out) {
  // Each channel numbered once (a hash lookup per end), so the sort below
  // compares small keys, not two channels' 60 bytes.
  std::unordered_map<Channel, uint32_t, ChannelHash> numbers;
  struct Key {
    uint32_t channel;
    bool recv;
    uint64_t ts;
    size_t index;
  };
  std::vector<Key> keys;
  for (size_t i = 0; i < ends.size(); i++) {
    if (!which(i)) continue;
    auto [it, fresh] = numbers.try_emplace(channel(ends[i]), static_cast<uint32_t>(numbers.size()));
    keys.push_back({it->second, ends[i].m.recv, ends[i].ts, i});
  }
  // Group by channel; within one, sends before receives, each in time order.
  std::sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
    return std::tie(a.channel, a.recv, a.ts, a.index) < std::tie(b.channel, b.recv, b.ts, b.index);
  });
  std::vector<Range> sends, recvs;
  for (size_t g = 0; g < keys.size();) {
    size_t h = g;
    while (h < keys.size() && keys[h].channel == keys[g].channel) h++;
    sends.clear(), recvs.clear();
    for (size_t k = g; k < h; k++) {
      const MessageEnd& e = ends[keys[k].index];
      auto begin = static_cast<int64_t>(e.m.seq);
      Range r{keys[k].index, begin, begin + static_cast<int64_t>(e.m.bytes), e.ts};
      (e.m.recv ? recvs : sends).push_back(r);
    }
    const NetMessage& m = ends[keys[g].index].m;
    if (!sends.empty() && !recvs.empty()) {
      if (pairing_of(m) == Pairing::Order) {
        pair_by_order(sends, recvs, ends, out);
      } else {
        if (m.proto == NetProto::Tcp) unwrap_tcp(sends, recvs, ends);
        pair_by_bytes(sends, recvs, out);
      }
    }
    g = h;
  }
}

// UDP ends whose addresses disagree: a socket bound to the wildcard
// (0.0.0.0, ::) records it as its own address, while the other end saw the
// address the datagram really carried. What is left unpaired is tried
// again by ports alone (scoped by machine when the known addresses are all
// this machine's), in order by size as before.
Channel udp_by_ports(const MessageEnd& e) {
  Channel c = channel_of(e);
  auto local_only = [&](const std::array<uint8_t, 16>& a) { return machine_local(a); };
  const bool scoped = local_only(c.from_addr) && local_only(c.to_addr);
  c.machine = scoped ? e.machine : kGlobal;
  c.from_addr = {}, c.to_addr = {};
  return c;
}

}  // namespace

std::vector<MessageMatch> match_messages(const std::vector<MessageEnd>& ends) {
  std::vector<MessageMatch> out;
  pair_channels(
      ends, [&](size_t i) { return pairable(ends[i].m); }, channel_of, out);
  // The second chance of UDP ends a wildcard address kept apart.
  std::vector<bool> used(ends.size());
  for (const MessageMatch& m : out) used[m.send] = used[m.recv] = true;
  pair_channels(
      ends,
      [&](size_t i) {
        const NetMessage& m = ends[i].m;
        return !used[i] && m.proto == NetProto::Udp && pairable(m);
      },
      udp_by_ports, out);
  std::sort(out.begin(), out.end(),
            [](const MessageMatch& a, const MessageMatch& b) { return a.recv < b.recv; });
  return out;
}

std::vector<uint32_t> host_machines(const std::vector<formats::HostClocks>& hosts) {
  std::vector<uint32_t> machine(hosts.size());
  for (size_t i = 0; i < hosts.size(); i++) {
    machine[i] = static_cast<uint32_t>(i);
    if (hosts[i].boot_id.empty()) continue;
    for (size_t j = 0; j < i; j++)
      if (hosts[j].boot_id == hosts[i].boot_id) {
        machine[i] = machine[j];
        break;
      }
  }
  return machine;
}

MessageEnd message_end(const formats::Event& ev, const std::vector<uint32_t>& machines) {
  MessageEnd e;
  e.host = ev.host;
  e.machine = ev.host < machines.size() ? machines[ev.host] : ev.host;
  e.pid = ev.pid, e.tid = ev.tid, e.ts = ev.ts;
  e.m = formats::net_message(ev);
  return e;
}

}  // namespace atrace::analysis
