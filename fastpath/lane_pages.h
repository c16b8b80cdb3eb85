// Which pages of the fast path's lanes hold memory (docs/fast-path.md,
// "Memory"). The lanes are a memfd shared by the target and atrace
// (ring_layout.h), large enough to hold a whole burst of records, whose
// pages cost nothing until touched. The reader (ring_reader.h) applies two
// rules so that they cost about what is in flight:
//  - behind the reader: the pages of the slots a drain gives back to the
//    writers, whole pages only, are given back to the system first
//    (MADV_REMOVE, for atrace and the target at once; before the tail that
//    lets the writers reach them again is published, so no writer is in
//    them);
//  - ahead of the writers: a page's first touch costs its writer a page
//    fault that allocates and zeroes it, several microseconds on a VM
//    (about 30 ns a record, as much as the rest of the trampoline). A
//    thread of atrace's allocates the pages up to `ahead` bytes past each
//    lane's head every millisecond (MADV_POPULATE_WRITE, Linux 5.14, on
//    its own mapping), so the writer finds the page in the memfd and only
//    maps it. Even that mapping is a page fault in the target, a few
//    microseconds on this VM: the thread then reads one byte of each such
//    page of the target's mapping with process_vm_readv, whose read fault
//    maps the page (writable: a shared memfd needs no write notification)
//    in the target's page tables, and reading changes nothing a writer
//    could race with. Its own thread: the drain that converts records can
//    take longer than the writers need to cross `ahead`.
// A lane thus holds (unread records) + `ahead` bytes of memory.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "fastpath/ring_layout.h"

namespace atrace::fastpath {

class LanePages {
 public:
  // Slots per page: the reader gives slots back in whole pages.
  static constexpr uint64_t kSlotsPerPage = 4096 / sizeof(FastRecord);

  // `lanes`: atrace's address of LaneHeader[0]; `records`: of lane 0's
  // first record; lanes of `lane_slots` records follow each other. With
  // `ahead_bytes`, starts the thread that allocates ahead of the heads.
  // `pid`, `target_records`: the target and its address of the records,
  // whose page tables the thread fills (0: only atrace's memfd pages).
  LanePages(LaneHeader* lanes, uint8_t* records, uint32_t lane_count, uint64_t lane_slots,
            uint64_t ahead_bytes, pid_t pid = 0, uint64_t target_records = 0);
  ~LanePages();
  LanePages(const LanePages&) = delete;
  LanePages& operator=(const LanePages&) = delete;

  // The slots [from, to) of `lane` (indices over the lane's life, both
  // multiples of kSlotsPerPage) are read and not yet given to the writers
  // (the reader publishes the tail after this returns).
  void release(uint32_t lane, uint64_t from, uint64_t to);
  // One round of the allocating thread (tests call it directly too: one
  // round at a time).
  void populate_ahead();

  uint64_t populated_bytes() const { return populated_bytes_; }
  uint64_t released_bytes() const { return released_bytes_; }

 private:
  template <typename F>
  void each_piece(uint32_t lane, uint64_t from, uint64_t to, F&& f) const;

  void map_in_target(uint8_t* at, uint64_t bytes);

  LaneHeader* lanes_;
  uint8_t* records_;
  pid_t pid_;
  uint64_t target_records_;
  uint64_t slots_;
  uint64_t ahead_;                   // in slots
  std::mutex populating_;            // one round at a time
  std::vector<uint64_t> populated_;  // per lane: slots before this were populated
  std::atomic<uint64_t> populated_bytes_{0}, released_bytes_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace atrace::fastpath
