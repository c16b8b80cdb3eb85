// Undoing the hooked returns (return_fixups.h).
#include "fastpath/return_fixups.h"

#include <algorithm>
#include <cstring>

namespace atrace::fastpath {

std::vector<ReturnFixup> return_fixups(const uint8_t* table, size_t bytes,
                                       const RingHeader& layout) {
  std::vector<ReturnFixup> out;
  const uint64_t slot_bytes = thread_slot_bytes(layout.shadow_depth);
  for (uint32_t i = 0; i < layout.thread_slots; ++i) {
    const uint64_t at = uint64_t{i} * slot_bytes;
    if (at + slot_bytes > bytes) break;
    ThreadSlot head;
    std::memcpy(&head, table + at, offsetof(ThreadSlot, frames));
    if (head.thread_pointer == 0) continue;
    const uint32_t depth = std::min(head.depth, layout.shadow_depth);
    for (uint32_t k = depth; k-- > 0;) {
      ShadowFrame f;
      std::memcpy(&f, table + at + offsetof(ThreadSlot, frames) + k * sizeof(ShadowFrame),
                  sizeof f);
      // A disarmed frame's slot already holds its return address (or,
      // if its activation is gone, someone else's word).
      if (f.flags != 0) continue;
      out.push_back({head.thread_pointer, f.stack_slot, f.return_address, f.function_id, k});
    }
  }
  return out;
}

}  // namespace atrace::fastpath
