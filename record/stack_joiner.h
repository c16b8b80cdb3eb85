// Call stacks between the programs and the trace (record --stack;
// bpf/atrace_stack.bpf.h): a stack record follows the entry record it
// belongs to (same thread, function id and time stamp: the program writes
// it only once the entry is recorded), and becomes that entry's `stack`.
//
//   stack_frames   a stack record -> its frames
//   join_stack     those frames into their entry, still held for reordering
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "formats/trace_types.h"
#include "record/reorder.h"

namespace atrace {

// The frames of a stack record (its size checked against the smaller
// record): the kernel's walk, with the return address read at [rsp] put in
// second place when the walk lacks it (at a function's first instruction
// the walk from rbp starts at the caller's caller; kernels since 6.11 add
// the return address themselves).
std::vector<uint64_t> stack_frames(const void* data, size_t size);

// Puts `stack` (a DecodedRecord of Type::Stack: the entry's key and its
// frames) into its entry event, written just before it in the same ring
// and still held for reordering. False when that event is not there.
bool join_stack(Reorderer& held, formats::Event&& stack);

}  // namespace atrace
