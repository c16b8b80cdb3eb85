// The recorder's side of the per-CPU lanes of function entries and exits
// (struct atrace_lane_ctl in bpf/atrace.h, bpf/lanes.bpf.h): reads each
// lane's published slots in order and frees them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "record/map_memory.h"
#include "record/rings.h"

namespace atrace {

class SlotLanes {
 public:
  // The loaded lane_ctl and lane_data maps: `ncpus` lanes of `slots` each
  // (a power of two). Throws RecordError.
  SlotLanes(int ctl_fd, int data_fd, int ncpus, uint32_t slots);

  // Hands every published record to `handler` as the rings would (a GAP
  // widened to its ring layout), lane by lane in order, and frees the
  // slots; stops at a slot claimed but not yet published (its program was
  // preempted: the next drain goes on from there). Returns how many.
  size_t drain(const PerCpuRings::Handler& handler);

 private:
  MapMemory ctl_, data_;
  int ncpus_;
  uint32_t slots_;
};

}  // namespace atrace
