// The whole of clock synchronisation but the causal repair: one estimate
// per host pair (messages both ways; else REALTIME snapshots; recordings
// of one boot: offset 0 unless options.estimate_same_boot), the spanning
// tree over them, and the report. Pure: the caller reads the traces.
#pragma once

#include <vector>

#include "sync/pair_estimate.h"
#include "sync/sync_types.h"

namespace atrace::sync {

// The estimate each host pair with evidence gets (a < b).
std::vector<PairEstimate> estimate_pairs(const SyncInput& input);

// Corrections for every host, reports for pairs with messages and the
// tree's edges (sorted by a, b).
SyncResult synchronize(const SyncInput& input);

}  // namespace atrace::sync
