// Which send a receive received (record --kernel=+net, issue 32): the one
// pairing of messages that `atrace merge` (clock synchronisation), the
// report's latencies and the exporters' flow arrows all use, so they agree
// on what a matched message is. Pure: ends in, pairs out.
//
// Rules, per channel (one direction of one connection, socket pair or pipe):
//   TCP   4-tuple, the receive's ends swapped, and overlapping
//         [seq, seq + bytes) mod 2^32 (unwrapped per channel, so a stream
//         longer than 4 GiB still pairs)
//   UDP   4-tuple swapped, then in order, by size (a lost datagram is
//         skipped when its size differs; with equal sizes a loss shifts
//         the pairing, which the ends cannot tell); what is left then by
//         ports alone: a socket bound to the wildcard records 0.0.0.0 as
//         its address, the other end the datagram's real one
//   unix  stream: obj/peer_obj swapped and overlapping byte offsets (both
//         offsets known); datagram/seqpacket: obj/peer_obj swapped, then in
//         order by size as UDP
//   pipe  the same obj, overlapping byte offsets (both known)
// Pipes, unix sockets and loopback or unspecified addresses name a kernel
// object only within one machine (boot): those channels never pair ends of
// two machines, even when both machines used 127.0.0.1 and the same ports.
// Of the sends whose bytes a receive holds, the one sent last is its match:
// the tightest causal bound (the receive is after every one of them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "formats/trace_types.h"

namespace atrace::analysis {

struct MessageEnd {
  uint16_t host = 0;  // Event::host
  // Ends with the same machine (same boot id) share kernel objects: pipes,
  // unix sockets and loopback/own addresses are scoped by it.
  uint32_t machine = 0;
  uint32_t pid = 0, tid = 0;
  uint64_t ts = 0;  // Event::ts: the system call's exit
  formats::NetMessage m;
};

struct MessageMatch {
  size_t send = 0;  // index into ends
  size_t recv = 0;
  uint64_t bytes = 0;  // bytes the two have in common
};

// For every receive, the send whose bytes it received that was sent last
// (rules above); receives with no such send are left out. In receive order
// (by index into ends). O(n log n): ends are grouped by channel, not paired.
std::vector<MessageMatch> match_messages(const std::vector<MessageEnd>& ends);

// The machine of each host of a trace (TraceReader::hosts()): hosts with
// the same boot id share one; a host whose boot id is unknown is its own.
std::vector<uint32_t> host_machines(const std::vector<formats::HostClocks>& hosts);

// A Message event as an end, on the machine host_machines() gave its host.
MessageEnd message_end(const formats::Event& ev, const std::vector<uint32_t>& machines);
}  // namespace atrace::analysis
