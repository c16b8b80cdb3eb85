// The cheapest split of a communication graph into two groups (`report
// --flows`, docs/flows.md): the question of the dataflow profilers this
// project started from, which parts of a program talk to each other little
// enough to run apart. Pure: nodes, their work and weighted edges in, a
// side per node out.
//
// "Cheapest" is the ratio cut: the communication crossing the split divided
// by the work of its lighter side. The cut alone would always cut off the
// node that does least (an idle thread has one edge); dividing by the work
// makes a split that puts real work on both sides win. Both sides must do
// some work. Among splits of equal ratio (two groups that never talk: 0),
// the most even one.
//
// Exact (every split tried) up to kExactNodes nodes that do work or talk;
// beyond, the kExactNodes busiest are split exactly and every other node
// joins the side it talks to most (the lighter on a tie), then single nodes
// move while that lowers the ratio: FlowSplit::exact says which.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace atrace::analysis {

inline constexpr size_t kExactNodes = 16;

struct SplitEdge {
  size_t a = 0, b = 0;
  uint64_t weight = 0;
};

struct FlowSplit {
  // Per node: 0 or 1, its group; 2 for a node that neither works nor
  // talks (left out of both).
  std::vector<uint8_t> side;
  uint64_t cut = 0;           // weight of the edges between the groups
  uint64_t work[2] = {0, 0};  // of each group
  bool exact = true;
};

// nullopt when no split puts work on both sides (fewer than two nodes do
// work).
std::optional<FlowSplit> cheapest_split(const std::vector<uint64_t>& work,
                                        const std::vector<SplitEdge>& edges);

}  // namespace atrace::analysis
