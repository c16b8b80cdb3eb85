// Messages per sending or receiving function and peer (record
// --kernel=+net; `atrace report`'s messages table and JSON `messages`):
// how many were sent and received and how many bytes, per (innermost traced
// function open at the message, protocol, peer).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "formats/trace_types.h"

namespace atrace::analysis {

struct MessageCount {
  uint32_t key = 0;  // the function: profile slot + 1, 0 for none
  formats::NetProto proto = formats::NetProto::Tcp;
  std::string peer;  // formats::net_end(m, true)
  uint64_t sent = 0, sent_bytes = 0;
  uint64_t received = 0, received_bytes = 0;
};

class MessageTable {
 public:
  void add(uint32_t key, const formats::NetMessage& m);
  // Every (function, protocol, peer) seen, in key order.
  std::vector<MessageCount> rows() const;

 private:
  // Messages cost a system call each: a map is fast enough.
  std::map<std::tuple<uint32_t, uint8_t, std::string>, MessageCount> rows_;
};

}  // namespace atrace::analysis
