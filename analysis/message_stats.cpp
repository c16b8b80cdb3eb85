#include "analysis/message_stats.h"

namespace atrace::analysis {

void MessageTable::add(uint32_t key, const formats::NetMessage& m) {
  std::string peer = formats::net_end(m, true);
  auto [it, fresh] = rows_.try_emplace(std::make_tuple(key, static_cast<uint8_t>(m.proto), peer));
  MessageCount& r = it->second;
  if (fresh) {
    r.key = key;
    r.proto = m.proto;
    r.peer = std::move(peer);
  }
  if (m.recv) {
    r.received++;
    r.received_bytes += m.bytes;
  } else {
    r.sent++;
    r.sent_bytes += m.bytes;
  }
}

std::vector<MessageCount> MessageTable::rows() const {
  std::vector<MessageCount> out;
  out.reserve(rows_.size());
  for (const auto& [k, r] : rows_) out.push_back(r);
  return out;
}

}  // namespace atrace::analysis
