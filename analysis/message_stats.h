// Messages per sending or receiving function and peer (record
// --kernel=+net; `atrace report`'s messages table and JSON `messages`):
// how many were sent and received and how many bytes, per (innermost traced
// function open at the message, protocol, peer), and how long the matched
// ones took from send to receive (analysis/message_match.h pairs them).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/message_match.h"
#include "formats/trace_types.h"

namespace atrace::analysis {

struct MessageCount {
  uint16_t host = 0;  // of the sending or receiving thread (Event::host)
  uint32_t key = 0;   // the function: profile slot + 1, 0 for none
  formats::NetProto proto = formats::NetProto::Tcp;
  std::string peer;  // formats::net_end(m, true)
  uint64_t sent = 0, sent_bytes = 0;
  uint64_t received = 0, received_bytes = 0;
  // Sends some traced receive got bytes of; receives paired with their send.
  uint64_t sent_matched = 0, received_matched = 0;
  // One-way latency, the receive's time minus the send's (both the return
  // of the system call; corrected in a merged trace), over the matched
  // pairs the row takes part in (as sender or receiver): nearest-rank
  // percentiles; meaningful only when latencies > 0.
  uint64_t latencies = 0;
  int64_t latency_p50_ns = 0, latency_p99_ns = 0;
};

class MessageTable {
 public:
  // The machine of each host (host_machines(reader.hosts())); by default
  // every host is its own.
  void machines(std::vector<uint32_t> m) { machines_ = std::move(m); }
  // A Message event, in the row of `key`.
  void add(uint32_t key, const formats::Event& ev);
  // Every (host, function, protocol, peer) seen, in key order, with the
  // messages matched among all added.
  std::vector<MessageCount> rows() const;

 private:
  // Messages cost a system call each: a map is fast enough.
  std::map<std::tuple<uint16_t, uint32_t, uint8_t, std::string>, size_t> index_;
  std::vector<MessageCount> rows_;
  std::vector<uint32_t> machines_;
  std::vector<MessageEnd> ends_;
  std::vector<size_t> end_row_;  // per end, its row
};

}  // namespace atrace::analysis
