#include "analysis/raw_time.h"

namespace atrace::analysis {

RawClock::RawClock(const formats::Corrections* corrections) {
  if (!corrections) return;
  for (const auto& h : corrections->hosts)
    inverse_.push_back(h.map.empty() ? sync::Segments{} : sync::invert(h.map));
}

uint64_t RawClock::raw(uint16_t host, uint64_t ts) const {
  if (host >= inverse_.size() || inverse_[host].empty()) return ts;
  const int64_t r = sync::map_time(inverse_[host], static_cast<int64_t>(ts));
  return r > 0 ? static_cast<uint64_t>(r) : 0;
}

}  // namespace atrace::analysis
