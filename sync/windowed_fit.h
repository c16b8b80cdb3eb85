// Offset and drift of one host pair from the messages they exchanged: the
// convex hull method (separating_lines.h) per window of the messages,
// joined into one continuous piecewise-linear map. Windows, because NTP
// slews MONOTONIC: a clock's rate changes over minutes, so one line over
// an hour would not fit, and a window of seconds nearly does.
#pragma once

#include <optional>
#include <vector>

#include "sync/pair_estimate.h"
#include "sync/sync_types.h"

namespace atrace::sync {

// a_to_b: messages a sent to b; b_to_a: the other way. Nothing without
// messages both ways (one way bounds the offset from one side only).
// The map is b's clock to a's; each knot (window boundary) lies in the
// middle of what the windows on both sides allow there, so the error of
// the map within a window is at most half that band when the clocks are
// linear within each window. A window's bound_ns is the larger of that
// and what the messages allow when the relation is not linear, only its
// rate within options.max_rate_change_ppm of the window's possible drifts
// (the "rate-bounded band", measured at every message of the window): a
// rate change inside a window still leaves the truth inside the bound.
std::optional<PairEstimate> fit_messages(HostIndex a, HostIndex b,
                                         const std::vector<MessageSample>& a_to_b,
                                         const std::vector<MessageSample>& b_to_a,
                                         const SyncOptions& options);

}  // namespace atrace::sync
