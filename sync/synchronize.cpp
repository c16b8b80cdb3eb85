#include "sync/synchronize.h"

#include <algorithm>
#include <map>
#include <utility>

#include "sync/realtime_rendezvous.h"
#include "sync/spanning_tree.h"
#include "sync/windowed_fit.h"

namespace atrace::sync {

namespace {

struct TwoWays {
  std::vector<MessageSample> a_to_b, b_to_a;
};

}  // namespace

std::vector<PairEstimate> estimate_pairs(const SyncInput& input) {
  const size_t n = input.hosts.size();
  std::map<std::pair<HostIndex, HostIndex>, TwoWays> by_pair;
  for (const auto& d : input.messages) {
    if (d.from == d.to || d.from >= n || d.to >= n) continue;
    HostIndex a = std::min(d.from, d.to), b = std::max(d.from, d.to);
    auto& w = by_pair[{a, b}];
    auto& into = d.from == a ? w.a_to_b : w.b_to_a;
    into.insert(into.end(), d.samples.begin(), d.samples.end());
  }
  std::vector<PairEstimate> out;
  for (HostIndex a = 0; a < n; ++a) {
    for (HostIndex b = a + 1; b < n; ++b) {
      const HostClock& ha = input.hosts[a];
      const HostClock& hb = input.hosts[b];
      if (!ha.boot_id.empty() && ha.boot_id == hb.boot_id && !input.options.estimate_same_boot) {
        out.push_back(same_boot(a, b));
        continue;
      }
      std::optional<PairEstimate> by_messages;
      if (auto it = by_pair.find({a, b}); it != by_pair.end())
        by_messages = fit_messages(a, b, it->second.a_to_b, it->second.b_to_a, input.options);
      // Messages unless they contradict a linear relation and REALTIME
      // has something to say.
      if (by_messages && by_messages->report.quality != Quality::kFail) {
        out.push_back(std::move(*by_messages));
        continue;
      }
      auto by_realtime = fit_realtime(a, ha, b, hb);
      if (by_realtime && by_realtime->report.quality != Quality::kFail)
        out.push_back(std::move(*by_realtime));
      else if (by_messages) out.push_back(std::move(*by_messages));
      else if (by_realtime) out.push_back(std::move(*by_realtime));
    }
  }
  return out;
}

SyncResult synchronize(const SyncInput& input) {
  std::vector<PairEstimate> estimates = estimate_pairs(input);
  TreeResult tree = spanning_tree(input.hosts.size(), input.options.reference, estimates);
  SyncResult out;
  out.hosts = std::move(tree.hosts);
  for (auto& r : tree.pairs)
    if (r.in_tree || r.method == Method::kMessages) out.pairs.push_back(r);
  std::sort(out.pairs.begin(), out.pairs.end(), [](const PairReport& x, const PairReport& y) {
    return std::pair(x.a, x.b) < std::pair(y.a, y.b);
  });
  return out;
}

}  // namespace atrace::sync
