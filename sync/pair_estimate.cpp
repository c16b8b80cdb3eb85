#include "sync/pair_estimate.h"

#include <algorithm>

namespace atrace::sync {

void summarise(PairEstimate& e, int64_t first, int64_t last) {
  int64_t mid = first + (last - first) / 2;
  e.report.offset_ns = map_time(e.b_to_a, mid) - mid;
  if (last > first) {
    double rate = static_cast<double>(map_time(e.b_to_a, last) - map_time(e.b_to_a, first)) /
                  static_cast<double>(last - first);
    e.report.drift_ppm = (rate - 1.0) * 1e6;
  } else {
    e.report.drift_ppm = e.b_to_a.front().drift_ppm;
  }
  int64_t bound = 0;
  for (const Segment& s : e.b_to_a) bound = std::max(bound, s.bound_ns);
  e.report.bound_ns = bound;
}

}  // namespace atrace::sync
