// message_match_bench: how long analysis::match_messages takes on M
// messages (issue 32: it pairs every send and receive of a trace, for
// merge, the report and the exporters), on a synthetic mix of channels:
// C TCP connections (a request and an answer per exchange, the answer read
// in two receives), C pipes and C UDP flows, round robin. Prints the
// numbers docs/BENCHMARKS.md ("Matching messages") quotes.
//
//   message_match_bench [MESSAGES] [CHANNELS]   (defaults 3000000 1000)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "analysis/analysis.h"

using atrace::analysis::MessageEnd;
using atrace::formats::NetProto;

namespace {

MessageEnd end(NetProto proto, bool recv, uint32_t channel, uint64_t seq, uint64_t bytes,
               uint64_t ts) {
  MessageEnd e;
  e.ts = ts;
  e.m.recv = recv;
  e.m.proto = proto;
  e.m.seq = seq;
  e.m.bytes = bytes;
  if (proto == NetProto::Pipe) {
    e.m.obj = 1000 + channel;
    return e;
  }
  e.m.family = 4;
  const uint8_t a[4] = {10, 0, 0, 1}, b[4] = {10, 0, 0, 2};
  std::memcpy(e.m.laddr, recv ? b : a, 4);
  std::memcpy(e.m.paddr, recv ? a : b, 4);
  e.m.lport = static_cast<uint16_t>(recv ? 80 : 20000 + channel);
  e.m.pport = static_cast<uint16_t>(recv ? 20000 + channel : 80);
  return e;
}

}  // namespace

int main(int argc, char** argv) {
  const size_t messages = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 3000000;
  const uint32_t channels = argc > 2 ? static_cast<uint32_t>(std::atoi(argv[2])) : 1000;
  std::vector<MessageEnd> ends;
  ends.reserve(messages * 2);
  std::vector<uint64_t> offset(3 * channels, 0xFFFF0000u);
  uint64_t ts = 0;
  for (size_t i = 0; ends.size() + 3 <= 2 * messages; i++) {
    const uint32_t c = static_cast<uint32_t>(i % channels);
    const NetProto proto = (i / channels) % 3 == 0   ? NetProto::Tcp
                           : (i / channels) % 3 == 1 ? NetProto::Pipe
                                                     : NetProto::Udp;
    uint64_t& at = offset[c * 3 + (proto == NetProto::Tcp ? 0 : proto == NetProto::Pipe ? 1 : 2)];
    const uint64_t seq = proto == NetProto::Tcp    ? at & 0xFFFFFFFFu
                         : proto == NetProto::Pipe ? at
                                                   : 0;
    ends.push_back(end(proto, false, c, seq, 200, ts += 10));
    if (proto == NetProto::Udp) {
      ends.push_back(end(proto, true, c, 0, 200, ts += 10));
    } else {
      const uint64_t mid = proto == NetProto::Tcp ? (at + 100) & 0xFFFFFFFFu : at + 100;
      ends.push_back(end(proto, true, c, seq, 100, ts += 10));
      ends.push_back(end(proto, true, c, mid, 100, ts += 10));
    }
    at += 200;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const auto matched = atrace::analysis::match_messages(ends);
  const auto t1 = std::chrono::steady_clock::now();
  size_t receives = 0;
  for (const auto& e : ends) receives += e.m.recv;
  const double ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  std::printf("ends %zu receives %zu matched %zu channels %u: %.0f ms, %.0f ns per end\n",
              ends.size(), receives, matched.size(), 3 * channels, ms,
              ms * 1e6 / static_cast<double>(ends.size()));
  return matched.size() == receives ? 0 : 1;
}
