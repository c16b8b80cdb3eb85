#include "analysis/compensation.h"

namespace atrace::analysis {

uint64_t compensate_duration(uint64_t dur, uint64_t own_inside, uint64_t nested,
                             CompensationResidual& r) {
  const uint64_t probes = own_inside + nested;
  if (dur >= probes) return dur - probes;
  r.clamped_calls++;
  r.residual_ns += probes - dur;
  return 0;
}

}  // namespace atrace::analysis
