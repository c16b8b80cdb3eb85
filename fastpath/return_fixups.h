// What undoing the fast path puts back on the threads' stacks
// (docs/fast-path.md, "Trampolines"): every hooked frame's stack slot holds
// the return stub's address. With the threads stopped (and none of them
// inside a code region), atrace writes each frame's original return address
// back where the slot still holds the stub, in the order given here. The
// shadow stacks stay as they are: a thread stopped in a signal handler that
// interrupted the entry code between a frame's push and the write of the
// stub into its slot (its slot still holds its own return address) writes
// the stub when the handler returns, and its call's return must find that
// frame.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "fastpath/ring_layout.h"

namespace atrace::fastpath {

struct ReturnFixup {
  uint64_t thread_pointer;
  uint64_t stack_slot;      // in the target
  uint64_t return_address;  // to write there when it still holds the stub
  uint32_t function_id = 0;
  uint32_t depth = 0;  // the frame's index on its thread's shadow stack
};

// From a copy of the ring's thread table (its bytes from
// layout.threads_offset on, `bytes` of them): the frames of every claimed
// thread slot, each thread's from its top down. That order matters: a tail
// call between hooked functions leaves two frames on one slot, the upper
// one's return address being the stub itself, the lower one's the real one.
// Depths beyond layout.shadow_depth (a torn copy) are clamped.
std::vector<ReturnFixup> return_fixups(const uint8_t* table, size_t bytes,
                                       const RingHeader& layout);

}  // namespace atrace::fastpath
