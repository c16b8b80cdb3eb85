#include "analysis/message_stats.h"

#include <algorithm>

namespace atrace::analysis {

void MessageTable::add(uint32_t key, const formats::Event& ev) {
  MessageEnd end = message_end(ev, machines_);
  const formats::NetMessage& m = end.m;
  std::string peer = formats::net_end(m, true);
  auto [it, fresh] = index_.try_emplace(
      std::make_tuple(ev.host, key, static_cast<uint8_t>(m.proto), peer), rows_.size());
  if (fresh) {
    MessageCount r;
    r.host = ev.host;
    r.key = key;
    r.proto = m.proto;
    r.peer = std::move(peer);
    rows_.push_back(std::move(r));
  }
  MessageCount& r = rows_[it->second];
  if (m.recv) {
    r.received++;
    r.received_bytes += m.bytes;
  } else {
    r.sent++;
    r.sent_bytes += m.bytes;
  }
  ends_.push_back(std::move(end));
  end_row_.push_back(it->second);
}

namespace {

// Nearest rank: the smallest sample with at least p% of them at or below.
int64_t percentile(const std::vector<int64_t>& sorted, unsigned p) {
  size_t rank = (sorted.size() * p + 99) / 100;
  return sorted[rank ? rank - 1 : 0];
}

}  // namespace

std::vector<MessageCount> MessageTable::rows() const {
  std::vector<MessageCount> rows = rows_;
  std::vector<std::vector<int64_t>> latency(rows.size());
  std::vector<bool> send_matched(ends_.size());
  for (const MessageMatch& mm : match_messages(ends_)) {
    const size_t send_row = end_row_[mm.send], recv_row = end_row_[mm.recv];
    const int64_t ns = static_cast<int64_t>(ends_[mm.recv].ts - ends_[mm.send].ts);
    rows[recv_row].received_matched++;
    latency[recv_row].push_back(ns);
    if (!send_matched[mm.send]) rows[send_row].sent_matched++;
    send_matched[mm.send] = true;
    if (send_row != recv_row) latency[send_row].push_back(ns);
  }
  for (size_t i = 0; i < rows.size(); i++) {
    auto& v = latency[i];
    if (v.empty()) continue;
    std::sort(v.begin(), v.end());
    rows[i].latencies = v.size();
    rows[i].latency_p50_ns = percentile(v, 50);
    rows[i].latency_p99_ns = percentile(v, 99);
  }
  std::sort(rows.begin(), rows.end(), [](const MessageCount& a, const MessageCount& b) {
    return std::tie(a.host, a.key, a.proto, a.peer) < std::tie(b.host, b.key, b.proto, b.peer);
  });
  return rows;
}

}  // namespace atrace::analysis
