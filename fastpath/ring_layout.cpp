#include "fastpath/ring_layout.h"

#include <stdexcept>

namespace atrace::fastpath {

namespace {

constexpr uint64_t kPage = 4096;

bool power_of_two(uint32_t v) { return v != 0 && (v & (v - 1)) == 0; }

uint64_t page_up(uint64_t v) { return (v + kPage - 1) & ~(kPage - 1); }

}  // namespace

RingHeader make_layout(const RingGeometry& g) {
  if (!power_of_two(g.lane_count) || !power_of_two(g.lane_slots) || !power_of_two(g.thread_slots) ||
      g.shadow_depth == 0)
    throw std::invalid_argument(
        "fast-path ring: lane count, lane slots and thread slots must be powers of two");
  RingHeader h{};
  h.magic = kRingMagic;
  h.version = kRingVersion;
  h.lane_count = g.lane_count;
  h.lane_slots = g.lane_slots;
  h.thread_slots = g.thread_slots;
  h.shadow_depth = g.shadow_depth;
  h.lanes_offset = kPage;
  h.records_offset = page_up(h.lanes_offset + uint64_t{g.lane_count} * sizeof(LaneHeader));
  h.threads_offset =
      page_up(h.records_offset + uint64_t{g.lane_count} * g.lane_slots * sizeof(FastRecord));
  h.gate = 1;
  h.total_bytes =
      page_up(h.threads_offset + uint64_t{g.thread_slots} * thread_slot_bytes(g.shadow_depth));
  return h;
}

}  // namespace atrace::fastpath
