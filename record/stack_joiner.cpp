#include "record/stack_joiner.h"

#include <algorithm>

#include "bpf/atrace.h"

namespace atrace {

std::vector<uint64_t> stack_frames(const void* data, size_t size) {
  const auto* r = static_cast<const atrace_rec_stack*>(data);
  // The record is one of two sizes (bpf/atrace.h); its frames are where
  // the smaller one has them, and never past the end of the record.
  const size_t room = (size - offsetof(atrace_rec_stack, ips)) / sizeof(uint64_t);
  const size_t n = std::min<size_t>({r->nframes, room, formats::kMaxStackFrames});
  std::vector<uint64_t> frames(r->ips, r->ips + n);
  if (r->ret_addr && !frames.empty() && (frames.size() < 2 || frames[1] != r->ret_addr)) {
    frames.insert(frames.begin() + 1, r->ret_addr);
    if (frames.size() > n) frames.pop_back();  // the depth asked for
  }
  return frames;
}

bool join_stack(Reorderer& held, formats::Event&& stack) {
  formats::Event* ev = held.find_held(stack.tid, stack.ts, stack.kind, stack.id);
  if (!ev) return false;
  ev->stack = std::move(stack.stack);
  return true;
}

}  // namespace atrace
