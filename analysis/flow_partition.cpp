// The ratio cut of flow_partition.h: exhaustive over small graphs, seeded
// exhaustive plus greedy placement and single moves over large ones.
#include "analysis/flow_partition.h"

#include <algorithm>
#include <numeric>

namespace atrace::analysis {
namespace {

struct Score {
  uint64_t cut = 0;
  uint64_t lighter = 0, heavier = 0;
  // a/b < c/d without division: cut/lighter smaller, then lighter larger.
  bool better_than(const Score& o) const {
    const unsigned __int128 l = static_cast<unsigned __int128>(cut) * o.lighter;
    const unsigned __int128 r = static_cast<unsigned __int128>(o.cut) * lighter;
    if (l != r) return l < r;
    return lighter > o.lighter;
  }
};

// Adjacency as a dense weight matrix over the chosen nodes.
struct Graph {
  std::vector<size_t> nodes;  // index into the caller's nodes
  std::vector<uint64_t> w;    // nodes.size()^2
  std::vector<uint64_t> work;
  size_t n() const { return nodes.size(); }
  uint64_t at(size_t i, size_t j) const { return w[i * n() + j]; }
};

std::optional<Score> score(const Graph& g, const std::vector<uint8_t>& side) {
  Score s;
  uint64_t work[2] = {0, 0};
  for (size_t i = 0; i < g.n(); ++i) {
    work[side[i]] += g.work[i];
    for (size_t j = i + 1; j < g.n(); ++j)
      if (side[i] != side[j]) s.cut += g.at(i, j);
  }
  if (work[0] == 0 || work[1] == 0) return std::nullopt;
  s.lighter = std::min(work[0], work[1]);
  s.heavier = std::max(work[0], work[1]);
  return s;
}

// Every split of g's nodes (node 0 fixed on side 0).
std::optional<std::vector<uint8_t>> exhaustive(const Graph& g) {
  const size_t n = g.n();
  if (n < 2) return std::nullopt;
  std::optional<Score> best;
  std::vector<uint8_t> side(n, 0), best_side;
  for (uint64_t mask = 1; mask < (uint64_t{1} << (n - 1)); ++mask) {
    for (size_t i = 1; i < n; ++i) side[i] = (mask >> (i - 1)) & 1;
    auto s = score(g, side);
    if (s && (!best || s->better_than(*best))) {
      best = s;
      best_side = side;
    }
  }
  if (!best) return std::nullopt;
  return best_side;
}

}  // namespace

std::optional<FlowSplit> cheapest_split(const std::vector<uint64_t>& work,
                                        const std::vector<SplitEdge>& edges) {
  const size_t total = work.size();
  std::vector<uint64_t> degree(total, 0);
  for (const auto& e : edges) {
    if (e.a == e.b) continue;
    degree[e.a] += e.weight;
    degree[e.b] += e.weight;
  }
  std::vector<size_t> active;
  for (size_t i = 0; i < total; ++i)
    if (work[i] > 0 || degree[i] > 0) active.push_back(i);
  // The busiest first: they are the ones split exactly.
  std::stable_sort(active.begin(), active.end(),
                   [&](size_t a, size_t b) { return work[a] + degree[a] > work[b] + degree[b]; });
  const bool exact = active.size() <= kExactNodes;
  Graph g;
  g.nodes = active;
  g.w.assign(g.n() * g.n(), 0);
  std::vector<size_t> pos(total, SIZE_MAX);
  for (size_t i = 0; i < g.n(); ++i) pos[g.nodes[i]] = i;
  for (const auto& e : edges) {
    if (e.a == e.b) continue;
    const size_t i = pos[e.a], j = pos[e.b];
    g.w[i * g.n() + j] += e.weight;
    g.w[j * g.n() + i] += e.weight;
  }
  for (size_t i : g.nodes) g.work.push_back(work[i]);

  std::vector<uint8_t> side;
  if (exact) {
    auto s = exhaustive(g);
    if (!s) return std::nullopt;
    side = *s;
  } else {
    Graph seed;
    seed.nodes.assign(g.nodes.begin(), g.nodes.begin() + kExactNodes);
    seed.work.assign(g.work.begin(), g.work.begin() + kExactNodes);
    seed.w.assign(kExactNodes * kExactNodes, 0);
    for (size_t i = 0; i < kExactNodes; ++i)
      for (size_t j = 0; j < kExactNodes; ++j) seed.w[i * kExactNodes + j] = g.at(i, j);
    auto seeded = exhaustive(seed);
    if (!seeded) return std::nullopt;
    side = *seeded;
    side.resize(g.n(), 0);
    uint64_t side_work[2] = {0, 0};
    for (size_t i = 0; i < kExactNodes; ++i) side_work[side[i]] += g.work[i];
    // The rest, each to the side it talks to most so far.
    for (size_t i = kExactNodes; i < g.n(); ++i) {
      uint64_t talk[2] = {0, 0};
      for (size_t j = 0; j < i; ++j) talk[side[j]] += g.at(i, j);
      const uint8_t to = talk[0] != talk[1] ? (talk[1] > talk[0]) : (side_work[1] < side_work[0]);
      side[i] = to;
      side_work[to] += g.work[i];
    }
    // Single moves while one lowers the ratio (bounded: each move lowers
    // it, and there are finitely many splits; a round limit for safety).
    auto best = score(g, side);
    for (int round = 0; best && round < 32; ++round) {
      bool moved = false;
      for (size_t i = 0; i < g.n(); ++i) {
        side[i] ^= 1;
        auto moved_score = score(g, side);
        if (moved_score && moved_score->better_than(*best)) {
          best = moved_score;
          moved = true;
        } else {
          side[i] ^= 1;
        }
      }
      if (!moved) break;
    }
    if (!best) return std::nullopt;
  }
  FlowSplit out;
  out.exact = exact;
  out.side.assign(total, 2);
  for (size_t i = 0; i < g.n(); ++i) {
    out.side[g.nodes[i]] = side[i];
    out.work[side[i]] += g.work[i];
  }
  for (size_t i = 0; i < g.n(); ++i)
    for (size_t j = i + 1; j < g.n(); ++j)
      if (side[i] != side[j]) out.cut += g.at(i, j);
  return out;
}

}  // namespace atrace::analysis
