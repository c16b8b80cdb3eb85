// The fallback for two hosts that exchanged no messages both ways: meet
// through REALTIME. Each snapshot of b says "b's MONOTONIC m was REALTIME
// r"; a's snapshots say at which of a's MONOTONIC times a's REALTIME was
// r. Both REALTIMEs are only as good as NTP made them: the bound is both
// kernels' maxerror plus both snapshots' bracket widths, milliseconds
// where messages give microseconds, hence APPROXIMATE (FAIL if a kernel
// says its clock is unsynchronised).
#pragma once

#include <optional>

#include "sync/pair_estimate.h"
#include "sync/sync_types.h"

namespace atrace::sync {

// Nothing unless both hosts have snapshots. The map is b's MONOTONIC to
// a's, one knot per snapshot of b.
std::optional<PairEstimate> fit_realtime(HostIndex a, const HostClock& host_a, HostIndex b,
                                         const HostClock& host_b);

// Two recordings of one boot share MONOTONIC: offset 0, bound 0.
PairEstimate same_boot(HostIndex a, HostIndex b);

}  // namespace atrace::sync
