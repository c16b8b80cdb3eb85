#include "sync/spanning_tree.h"

#include <algorithm>
#include <cstdlib>
#include <tuple>

namespace atrace::sync {

namespace {

// Lower is better: a FAILed estimate after every other, then by bound.
std::tuple<bool, int64_t> weight(const PairEstimate& e) {
  return {e.report.quality == Quality::kFail, e.report.bound_ns};
}

}  // namespace

LoopResidual loop_residual(const PairEstimate& e, const std::vector<HostCorrection>& hosts) {
  const auto& ca = hosts[e.report.a].segments;
  const auto& cb = hosts[e.report.b].segments;
  std::vector<int64_t> xs;
  const auto& m = e.b_to_a;
  for (size_t i = 0; i < m.size(); ++i) {
    xs.push_back(m[i].start_ns);
    if (i + 1 < m.size()) xs.push_back(m[i].start_ns + (m[i + 1].start_ns - m[i].start_ns) / 2);
  }
  LoopResidual r;
  for (int64_t x : xs) {
    int64_t direct = map_time(ca, map_time(m, x));  // b -> a -> reference
    int64_t tree = map_time(cb, x);                 // b -> reference
    int64_t diff = std::abs(direct - tree);
    int64_t allowed =
        add_bounds(add_bounds(bound_at(m, x), bound_at(ca, map_time(m, x))), bound_at(cb, x));
    r.residual_ns = std::max(r.residual_ns, diff);
    r.consistent = r.consistent && diff <= allowed;
  }
  return r;
}

TreeResult spanning_tree(size_t host_count, HostIndex reference,
                         const std::vector<PairEstimate>& estimates) {
  TreeResult out;
  out.hosts.resize(host_count);
  for (size_t h = 0; h < host_count; ++h) {
    out.hosts[h].segments = identity_map();
    out.hosts[h].parent = static_cast<HostIndex>(h);
    out.hosts[h].connected = h == reference;
  }
  std::vector<bool> used(estimates.size(), false);
  // Prim: n is small (hosts), so a scan per added host is plenty.
  for (;;) {
    size_t best = estimates.size();
    for (size_t i = 0; i < estimates.size(); ++i) {
      const auto& r = estimates[i].report;
      if (out.hosts[r.a].connected == out.hosts[r.b].connected) continue;
      if (best == estimates.size() || weight(estimates[i]) < weight(estimates[best])) best = i;
    }
    if (best == estimates.size()) break;
    used[best] = true;
    const PairEstimate& e = estimates[best];
    // The new host's map to the host already in the tree.
    bool b_is_new = out.hosts[e.report.a].connected;
    HostIndex parent = b_is_new ? e.report.a : e.report.b;
    HostIndex child = b_is_new ? e.report.b : e.report.a;
    Segments to_parent = b_is_new ? e.b_to_a : invert(e.b_to_a);
    out.hosts[child].segments = compose(out.hosts[parent].segments, to_parent);
    out.hosts[child].parent = parent;
    out.hosts[child].connected = true;
  }
  for (auto& h : out.hosts)
    if (!h.connected)
      for (auto& s : h.segments) s.bound_ns = kUnbounded;

  for (size_t i = 0; i < estimates.size(); ++i) {
    PairReport r = estimates[i].report;
    r.in_tree = used[i];
    if (!used[i] && out.hosts[r.a].connected && out.hosts[r.b].connected) {
      LoopResidual l = loop_residual(estimates[i], out.hosts);
      r.loop_residual_ns = l.residual_ns;
      r.loop_consistent = l.consistent;
    }
    out.pairs.push_back(r);
  }
  return out;
}

}  // namespace atrace::sync
