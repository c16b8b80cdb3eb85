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

void StackJoiner::hold(const void* data, size_t size) {
  const auto* h = static_cast<const atrace_rec_hdr*>(data);
  Held& held = held_[h->tid];
  held.id = h->id;
  held.frames = stack_frames(data, size);
}

void StackJoiner::join(formats::Event& ev) {
  auto it = held_.find(ev.tid);
  if (it == held_.end()) return;
  if (ev.kind == formats::EventKind::FuncEntry && ev.id == it->second.id)
    ev.stack = std::move(it->second.frames);
  held_.erase(it);
}

}  // namespace atrace
