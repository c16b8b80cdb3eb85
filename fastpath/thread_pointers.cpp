#include "fastpath/thread_pointers.h"

#include <algorithm>

namespace atrace::fastpath {

void ThreadPointerMap::add_existing(const std::vector<ThreadPointer>& threads, uint64_t ts) {
  (void)ts;  // they held their pointers before it: from the start of time
  for (const ThreadPointer& t : threads) {
    if (!t.fs_base || !t.tid) continue;
    auto& list = holders_[t.fs_base];
    list.push_back(Holder{0, UINT64_MAX, t.tid});
    live_[t.tid] = t.fs_base;
  }
}

void ThreadPointerMap::thread_created(uint64_t ts, uint32_t tid, uint64_t fs_base) {
  if (!fs_base || !tid) return;
  auto& list = holders_[fs_base];
  // Whoever held it is done: its TCB was free for glibc to reuse.
  for (Holder& h : list)
    if (h.until > ts && h.from <= ts) h.until = ts;
  list.push_back(Holder{ts, UINT64_MAX, tid});
  live_[tid] = fs_base;
}

void ThreadPointerMap::thread_ended(uint64_t ts, uint32_t tid) {
  auto it = live_.find(tid);
  if (it == live_.end()) return;
  for (Holder& h : holders_[it->second])
    if (h.tid == tid && h.until == UINT64_MAX) h.until = std::max(ts, h.from);
  live_.erase(it);
}

uint32_t ThreadPointerMap::tid_at(uint64_t fs_base, uint64_t ts) const {
  auto it = holders_.find(fs_base);
  if (it == holders_.end()) return kUnknownTid;
  const std::vector<Holder>& list = it->second;
  for (const Holder& h : list)
    if (h.from <= ts && ts < h.until) return h.tid;
  // Just outside one holder's life (the conversion's error): that holder,
  // if it is the only one near.
  uint32_t near = kUnknownTid;
  int count = 0;
  for (const Holder& h : list) {
    const bool before = ts < h.from && h.from - ts <= slack_ns_;
    const bool after = ts >= h.until && ts - h.until < slack_ns_;
    if (before || after) {
      near = h.tid;
      ++count;
    }
  }
  return count == 1 ? near : kUnknownTid;
}

}  // namespace atrace::fastpath
