// sync/: clock synchronisation of traces recorded on several hosts, pure
// algorithms (no I/O), the one header a file outside sync/ includes
// (tests/check_layering.py). `atrace merge` reads the traces, calls
// synchronize() and causal_repair(), and stores the corrections.
//
//   sync_types.h          the data: messages, clock snapshots, corrections, reports
//   piecewise.h           piecewise-linear clock maps: apply, invert, compose
//   separating_lines.h    the convex hull method for one window of one pair
//   windowed_fit.h        one pair from its messages, window by window
//   realtime_rendezvous.h one pair from REALTIME snapshots; same boot
//   spanning_tree.h       N hosts: the best pairs composed; loop residuals
//   synchronize.h         all of the above for a set of recordings
//   causal_repair.h       no receive before its send, least shifts
//   simulate.h            a simulated run with known clocks (tests, bench)
#pragma once

#include "sync/causal_repair.h"
#include "sync/pair_estimate.h"
#include "sync/piecewise.h"
#include "sync/realtime_rendezvous.h"
#include "sync/separating_lines.h"
#include "sync/simulate.h"
#include "sync/spanning_tree.h"
#include "sync/sync_types.h"
#include "sync/synchronize.h"
#include "sync/windowed_fit.h"
