// N hosts: each host pair with evidence has an estimate (messages,
// REALTIME or same boot), but one correction per host is needed. The
// tree takes the best pairs (smallest bound; a FAILed estimate only where
// nothing else connects a host) from the reference host outwards (Prim),
// and composes each host's correction along its path, the bounds added.
// Every pair left out closes a loop: its own estimate and the composed
// one should agree within their bounds; the difference is reported.
#pragma once

#include <vector>

#include "sync/pair_estimate.h"
#include "sync/sync_types.h"

namespace atrace::sync {

struct TreeResult {
  std::vector<HostCorrection> hosts;
  std::vector<PairReport> pairs;  // every estimate given, in_tree and loops filled
};

TreeResult spanning_tree(size_t host_count, HostIndex reference,
                         const std::vector<PairEstimate>& estimates);

// The largest difference, at the knots and middles of e's map, between
// e's own map and the one the corrections compose (in ns of reference
// time), and whether it is within the bounds of both.
struct LoopResidual {
  int64_t residual_ns = 0;
  bool consistent = true;
};
LoopResidual loop_residual(const PairEstimate& e, const std::vector<HostCorrection>& hosts);

}  // namespace atrace::sync
