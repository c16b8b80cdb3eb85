#include "sync/causal_repair.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <queue>

namespace atrace::sync {

namespace {

constexpr int kNone = -1;

class Repairer {
 public:
  Repairer(std::vector<std::vector<int64_t>>& times, const std::vector<MatchedMessage>& messages,
           const RepairOptions& o)
      : t_(times), orig_(times), msgs_(messages), o_(o) {
    const size_t hosts = t_.size();
    recv_of_.resize(hosts);
    sends_.resize(hosts);
    for (size_t h = 0; h < hosts; ++h) recv_of_[h].assign(t_[h].size(), kNone);
    for (size_t i = 0; i < msgs_.size(); ++i) {
      const auto& m = msgs_[i];
      recv_of_[m.recv_host][m.recv_event] = static_cast<int>(i);
      sends_[m.send_host].emplace_back(m.send_event, static_cast<int>(i));
    }
    for (auto& s : sends_) std::sort(s.begin(), s.end());
    send_done_.assign(msgs_.size(), false);
    recv_done_.assign(msgs_.size(), false);
    waiter_.assign(msgs_.size(), kNone);
    next_.assign(hosts, 0);
    jump_.assign(hosts, 0);
    jump_at_.assign(hosts, 0);
  }

  int64_t delay(const MatchedMessage& m) const {
    auto it = o_.min_delay_ns.find({m.send_host, m.recv_host});
    return it == o_.min_delay_ns.end() ? o_.default_min_delay_ns : it->second;
  }

  bool violates(const std::vector<std::vector<int64_t>>& t, const MatchedMessage& m) const {
    return t[m.recv_host][m.recv_event] < t[m.send_host][m.send_event] + delay(m);
  }

  void run() {
    using Key = std::pair<int64_t, HostIndex>;
    std::priority_queue<Key, std::vector<Key>, std::greater<Key>> ready;
    size_t finished = 0;
    for (HostIndex h = 0; h < t_.size(); ++h) {
      if (t_[h].empty()) ++finished;
      else ready.push({orig_[h][0], h});
    }
    std::vector<HostIndex> blocked;
    while (finished < t_.size()) {
      bool force = false;
      HostIndex h;
      if (ready.empty()) {
        // Every host waits on a send not yet placed: the messages form a
        // cycle (inconsistent input). Place the earliest receive anyway.
        auto it = std::min_element(blocked.begin(), blocked.end(), [&](HostIndex x, HostIndex y) {
          return orig_[x][next_[x]] < orig_[y][next_[y]];
        });
        h = *it;
        blocked.erase(it);
        waiter_[recv_of_[h][next_[h]]] = kNone;
        force = true;
      } else {
        h = ready.top().second;
        ready.pop();
      }
      size_t e = next_[h];
      int m = recv_of_[h][e];
      if (m != kNone && !send_done_[m] && !force) {
        waiter_[m] = static_cast<int>(h);
        blocked.push_back(h);
        continue;
      }
      place(h, e, m);
      auto [first, last] =
          std::equal_range(sends_[h].begin(), sends_[h].end(), std::pair<size_t, int>(e, kNone),
                           [](const auto& x, const auto& y) { return x.first < y.first; });
      for (auto it = first; it != last; ++it) {
        int sm = it->second;
        send_done_[sm] = true;
        if (waiter_[sm] != kNone) {
          HostIndex w = static_cast<HostIndex>(waiter_[sm]);
          waiter_[sm] = kNone;
          blocked.erase(std::find(blocked.begin(), blocked.end(), w));
          ready.push({orig_[w][next_[w]], w});
        }
      }
      if (++next_[h] < t_[h].size()) ready.push({orig_[h][next_[h]], h});
      else ++finished;
    }
  }

  const std::vector<std::vector<int64_t>>& original() const { return orig_; }

 private:
  // The shift a host carries at time t: its last jump, given back at the
  // amortisation rate since.
  int64_t carried(HostIndex h, int64_t t) const {
    double back = o_.amortization * static_cast<double>(t - jump_at_[h]);
    return std::max<int64_t>(0, jump_[h] - static_cast<int64_t>(back));
  }

  void place(HostIndex h, size_t e, int m) {
    const int64_t at = orig_[h][e];
    int64_t shift = carried(h, at);
    if (m != kNone && send_done_[m]) {
      const auto& msg = msgs_[m];
      int64_t need = t_[msg.send_host][msg.send_event] + delay(msg) - at;
      if (need > shift) {
        shift = need;
        jump_[h] = need;
        jump_at_[h] = at;
        ramp_back(h, e, need);
      }
    }
    if (m != kNone) recv_done_[m] = true;
    t_[h][e] = at + shift;
  }

  // Moves the events before a jump forward on a ramp rising to the jump,
  // so intervals stretch by at most the amortisation rate, not all at the
  // receive. Stops where the ramp no longer adds anything or would push a
  // send past what its placed receive allows.
  void ramp_back(HostIndex h, size_t e, int64_t jump) {
    const int64_t at = orig_[h][e];
    for (size_t i = e; i-- > 0;) {
      int64_t want =
          jump - static_cast<int64_t>(o_.amortization * static_cast<double>(at - orig_[h][i]));
      if (want <= t_[h][i] - orig_[h][i]) return;
      auto [first, last] =
          std::equal_range(sends_[h].begin(), sends_[h].end(), std::pair<size_t, int>(i, kNone),
                           [](const auto& x, const auto& y) { return x.first < y.first; });
      for (auto it = first; it != last; ++it) {
        const auto& msg = msgs_[it->second];
        if (!recv_done_[it->second]) continue;  // it will adapt when placed
        int64_t allowed = t_[msg.recv_host][msg.recv_event] - delay(msg) - orig_[h][i];
        if (want > allowed) return;
      }
      t_[h][i] = orig_[h][i] + want;
    }
  }

  std::vector<std::vector<int64_t>>& t_;
  const std::vector<std::vector<int64_t>> orig_;
  const std::vector<MatchedMessage>& msgs_;
  const RepairOptions& o_;
  std::vector<std::vector<int>> recv_of_;
  std::vector<std::vector<std::pair<size_t, int>>> sends_;
  std::vector<bool> send_done_, recv_done_;
  std::vector<int> waiter_;
  std::vector<size_t> next_;
  std::vector<int64_t> jump_, jump_at_;
};

std::pair<HostIndex, HostIndex> key(const MatchedMessage& m) {
  return {std::min(m.send_host, m.recv_host), std::max(m.send_host, m.recv_host)};
}

}  // namespace

RepairResult causal_repair(std::vector<std::vector<int64_t>>& times,
                           const std::vector<MatchedMessage>& messages,
                           const RepairOptions& options) {
  Repairer r(times, messages, options);
  RepairResult out;
  for (const auto& m : messages) {
    if (!r.violates(r.original(), m)) continue;
    ++out.violations_before;
    ++out.pairs[key(m)].violations_before;
  }
  r.run();
  for (const auto& m : messages) {
    auto& p = out.pairs[key(m)];
    if (!r.violates(times, m)) continue;
    ++out.violations_after;
    ++p.violations_after;
  }
  out.largest_shift_ns.assign(times.size(), 0);
  for (size_t h = 0; h < times.size(); ++h)
    for (size_t i = 0; i < times[h].size(); ++i)
      out.largest_shift_ns[h] = std::max(out.largest_shift_ns[h], times[h][i] - r.original()[h][i]);
  return out;
}

void note_repair(std::vector<PairReport>& pairs, const RepairResult& repair) {
  for (auto& p : pairs) {
    auto it = repair.pairs.find({std::min(p.a, p.b), std::max(p.a, p.b)});
    if (it != repair.pairs.end()) {
      p.violations_before = it->second.violations_before;
      p.violations_after = it->second.violations_after;
    }
    if (p.a < repair.largest_shift_ns.size() && p.b < repair.largest_shift_ns.size())
      p.largest_shift_ns = std::max(repair.largest_shift_ns[p.a], repair.largest_shift_ns[p.b]);
  }
}

}  // namespace atrace::sync
