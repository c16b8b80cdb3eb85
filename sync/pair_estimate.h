// What one method found for one host pair: the map from b's clock to a's
// and its report. The spanning tree chooses among these.
#pragma once

#include "sync/piecewise.h"
#include "sync/sync_types.h"

namespace atrace::sync {

struct PairEstimate {
  Segments b_to_a;
  PairReport report;
};

// Fills report.offset_ns, drift_ppm and bound_ns from b_to_a over the
// span [first, last] of b's times the evidence covers.
void summarise(PairEstimate& e, int64_t first, int64_t last);

}  // namespace atrace::sync
