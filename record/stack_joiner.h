// Call stacks between the programs and the trace (record --stack;
// bpf/atrace_stack.bpf.h): each stack record becomes the `stack` of the
// thread's next entry event of its function.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "formats/trace_types.h"

namespace atrace {

// The frames of a stack record (its size checked against the smaller
// record): the kernel's walk, with the return address read at [rsp] put in
// second place when the walk lacks it (at a function's first instruction
// the walk from rbp starts at the caller's caller; kernels since 6.11 add
// the return address themselves).
std::vector<uint64_t> stack_frames(const void* data, size_t size);

class StackJoiner {
 public:
  // A stack record: held for its thread's next entry.
  void hold(const void* data, size_t size);
  // A function event of the thread: an entry of the held record's
  // function gets its stack. Whatever was held is used up: a stack whose
  // entry was not recorded is dropped at the thread's next function event.
  void join(formats::Event& ev);
  void forget(uint32_t tid) { held_.erase(tid); }

 private:
  struct Held {
    uint32_t id = 0;
    std::vector<uint64_t> frames;
  };
  std::unordered_map<uint32_t, Held> held_;  // by tid
};

}  // namespace atrace
