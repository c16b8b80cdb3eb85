#include "userspace/compensation.h"

namespace atrace::analysis {

namespace {
uint64_t by_path(fmt::ProbePath p, uint64_t nop5, uint64_t emulated, uint64_t single_step) {
  switch (p) {
    case fmt::ProbePath::Nop5: return nop5;
    case fmt::ProbePath::Emulated: return emulated;
    case fmt::ProbePath::SingleStep: return single_step;
    default: return 0;
  }
}
}  // namespace

uint64_t ProbeCosts::of(fmt::ProbePath p) const { return by_path(p, nop5, emulated, single_step); }

uint64_t ProbeCosts::inside_of(fmt::ProbePath p) const {
  return by_path(p, inside_nop5, inside_emulated, inside_single_step);
}

ProbeCosts probe_costs(const fmt::TraceHeader& h) {
  return {h.probe_cost_nop5_ns,   h.probe_cost_emulated_ns,   h.probe_cost_singlestep_ns,
          h.probe_inside_nop5_ns, h.probe_inside_emulated_ns, h.probe_inside_singlestep_ns};
}

uint64_t compensate_duration(uint64_t dur, uint64_t own_inside, uint64_t nested,
                             CompensationResidual& r) {
  const uint64_t probes = own_inside + nested;
  if (dur >= probes) return dur - probes;
  r.clamped_calls++;
  r.residual_ns += probes - dur;
  return 0;
}

}  // namespace atrace::analysis
