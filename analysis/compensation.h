// `--compensate`: durations without what the probes add to them. The one
// rule every view that compensates (report, --tree, graphs, HTML) applies:
//
//   a call's compensated duration = its measured duration
//     - the inside cost of its own probes (the part of an entry + return
//       probe that falls between its own timestamps)
//     - the whole cost of every traced call nested in it, at any depth
//       (their probes ran entirely inside it)
//
// both calibrated per entry path when recording started (calibrate.h,
// TraceHeader::probe_cost_* / probe_inside_*). A call measured shorter than
// that is clamped at 0 and the shortfall is counted, never dropped silently.
#pragma once

#include <cstdint>

#include "formats/trace_types.h"

namespace atrace::analysis {

// By the path of the entry probe, in ns; 0: not measured. The recorder's
// filters read the same table (formats/trace_types.h).
using formats::probe_costs;
using formats::ProbeCosts;

// Calls whose measured duration was below what their probes account for:
// how many, and the ns below zero summed (how far the calibration was off).
struct CompensationResidual {
  uint64_t clamped_calls = 0;
  uint64_t residual_ns = 0;
};

// One call's compensated duration: `dur` minus `own_inside` minus `nested`
// (the whole cost of its traced callees), at least 0, the shortfall in `r`.
uint64_t compensate_duration(uint64_t dur, uint64_t own_inside, uint64_t nested,
                             CompensationResidual& r);

}  // namespace atrace::analysis
