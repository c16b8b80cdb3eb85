#include "fastpath/lane_pages.h"

#include <sys/mman.h>
#include <sys/uio.h>

#include <climits>

#include <algorithm>
#include <atomic>
#include <chrono>

#include "fastpath/inject/as_pointer.h"
#include "fastpath/ring_layout.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

namespace atrace::fastpath {

namespace {

// Populated in steps of 256 KiB: few madvise calls.
constexpr uint64_t kPopulateStep = (256u << 10) / sizeof(FastRecord);

}  // namespace

LanePages::LanePages(LaneHeader* lanes, uint8_t* records, uint32_t lane_count, uint64_t lane_slots,
                     uint64_t ahead_bytes, pid_t pid, uint64_t target_records)
    : lanes_(lanes),
      records_(records),
      pid_(pid),
      target_records_(target_records),
      slots_(lane_slots),
      ahead_(std::min(ahead_bytes / sizeof(FastRecord), lane_slots / 2) & ~(kPopulateStep - 1)),
      populated_(lane_count) {
  if (ahead_ == 0) return;
  // Not here: the install holds the process stopped meanwhile.
  thread_ = std::thread([this] {
    while (!stop_.load(std::memory_order_relaxed)) {
      populate_ahead();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
}

LanePages::~LanePages() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

// `f(address, bytes)` for [from, to) of the lane, split where it wraps.
template <typename F>
void LanePages::each_piece(uint32_t lane, uint64_t from, uint64_t to, F&& f) const {
  while (from < to) {
    const uint64_t at = from & (slots_ - 1);
    const uint64_t run = std::min(to - from, slots_ - at);
    f(records_ + (uint64_t{lane} * slots_ + at) * sizeof(FastRecord), run * sizeof(FastRecord));
    from += run;
  }
}

void LanePages::release(uint32_t lane, uint64_t from, uint64_t to) {
  if (lane >= populated_.size()) return;
  each_piece(lane, from, to, [&](uint8_t* at, uint64_t bytes) {
    if (madvise(at, bytes, MADV_REMOVE) == 0) released_bytes_ += bytes;
  });
}

// Never past what the writers may reach before the reader gives more back
// (published tail + lane_slots: the pages below hold unread records or are
// being released), so it never races release(): a page released is one
// the writers cannot reach until the tail is published, which happens
// after.
void LanePages::populate_ahead() {
  std::lock_guard<std::mutex> lock(populating_);
  for (uint32_t i = 0; i < populated_.size(); i++) {
    const uint64_t head = std::atomic_ref<uint64_t>(lanes_[i].head).load(std::memory_order_relaxed);
    const uint64_t tail = std::atomic_ref<uint64_t>(lanes_[i].tail).load(std::memory_order_acquire);
    uint64_t& done = populated_[i];
    const uint64_t want = std::min(head + ahead_, tail + slots_) & ~(kPopulateStep - 1);
    done = std::max(done, head & ~(kPopulateStep - 1));
    if (done >= want) continue;
    // A failure (an older kernel, no memory) leaves the faults to the writers.
    each_piece(i, done, want, [&](uint8_t* at, uint64_t bytes) {
      if (madvise(at, bytes, MADV_POPULATE_WRITE) == 0) populated_bytes_ += bytes;
      map_in_target(at, bytes);
    });
    done = want;
  }
}

// One byte of each page, in one process_vm_readv: its faults map the pages
// (already in the memfd) into the target. A failure (the target gone)
// changes nothing.
void LanePages::map_in_target(uint8_t* at, uint64_t bytes) {
  if (!target_records_) return;
  constexpr uint64_t kPage = 4096;
  const uint64_t remote = target_records_ + static_cast<uint64_t>(at - records_);
  const size_t pages = bytes / kPage;
  std::vector<uint8_t> sink(pages);
  std::vector<iovec> local(pages), far(pages);
  for (size_t i = 0; i < pages; i++) {
    local[i] = {&sink[i], 1};
    far[i] = {as_pointer(remote + i * kPage), 1};
  }
  for (size_t i = 0; i < pages; i += IOV_MAX) {
    const size_t n = std::min<size_t>(IOV_MAX, pages - i);
    process_vm_readv(pid_, &local[i], n, &far[i], n, 0);
  }
}

}  // namespace atrace::fastpath
