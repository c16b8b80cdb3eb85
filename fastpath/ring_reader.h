// atrace's reader of the fast path's ring (fastpath/ring_layout.h): each
// drain reads every lane's new records through a MemoryAccess and gives the
// slots back by writing each lane's tail (docs/fast-path.md, "Reading the
// records"). atrace maps the lanes itself (a memfd shared with the target:
// LocalMemory, plain copies); the same reader works on a ring reachable
// only through process_vm_readv (VmMemory), which the rest of this comment
// is about.
//
// System calls per drain, whatever the number of lanes and records: one
// read of the lane headers, one read of every lane's new slots (one or two
// ranges per lane, a wrapped lane two), one read of the same ranges again,
// and one write of the tails that moved. The second read is what makes a
// record safe to take: a slot is committed when its `seq` is its index + 1,
// but one copy of the slot may hold a `seq` stored after the fields it also
// copied (the kernel's copy is not ordered against the writer's stores), so
// a slot committed in the first read is taken with its fields from the
// second, made after the commit and before atrace gave the slot back.
//
// A reserved slot whose `seq` is not written yet (its writer was preempted
// between reserving and committing, or left the trampoline for good: a
// signal handler that longjmps, a thread killed there) does not hold the
// records after it: they are taken, and only the tail waits at the slot.
// Once the slot has been reserved for `commit_wait_ticks` (counted from
// the last drain that had not seen it reserved, which it cannot be older
// than), and an earlier drain already found it uncommitted (a drain that
// came late after the one before would otherwise give up a slot whose
// writer is only in the middle of its record), the reader gives it up: the tail passes it and the
// lane's `skipped` counts it (its page is not given back to the system: see LanePages). It stays
// watched until the lane comes round to it (a writer of the next lap may reserve it): a writer that
// commits meanwhile (preempted for longer than the wait, as happens on a loaded machine) has its
// record taken then, late (LaneStats::late; the consumer's reorder window puts it back in order or
// counts it late), and it is no longer counted lost. A writer that commits after the lane came
// round writes `seq` = its old index + 1, which never matches the index
// the reader expects in that slot, so it is not taken; the record the
// slot holds then may be overwritten by it and then is skipped in turn
// (counted). Left possible: the late writer's fields landing in the slot's
// next record between that record's commit and the reader's second read
// (a writer held for a whole lap of the lane, resuming within those
// microseconds): that one
// record then carries the late writer's fields.
//
// Order: records come lane by lane, each lane in slot order. Lanes are per
// CPU, so one thread's records are spread over lanes (a thread that moved
// between CPUs can have its entry in lane 0 and its exit in lane 1), and
// within a lane a writer preempted between its rdtscp and its reservation
// lands after later records. merge_by_time() puts one drain's records in
// time order (the TSC is synchronized across CPUs: tsc_clock.h refuses a
// machine without constant_tsc and nonstop_tsc). A record can still arrive
// a drain after a later record of its thread (a late commit, or a
// reservation after the headers were read): the consumer keeps each
// thread's events in its reorder window (record/reorder.h), as it does for
// the BPF lanes.
#pragma once

#include <cstdint>
#include <deque>
#include <set>
#include <vector>

#include "fastpath/lane_pages.h"
#include "fastpath/memory_access.h"
#include "fastpath/ring_layout.h"

namespace atrace::fastpath {

// What one lane has done, totals since the reader started.
struct LaneStats {
  uint64_t taken = 0;      // records handed out
  uint64_t full = 0;       // LaneHeader::lost: dropped by writers, the lane full
  uint64_t skipped = 0;    // reserved, not committed within the wait: given up (and not
                           // committed since, while the lane had not come round)
  uint64_t late = 0;       // given up, then committed: taken in a later drain
  uint64_t malformed = 0;  // committed with a kind no writer writes: dropped
  uint64_t lost() const { return full + skipped + malformed; }
};

class RingReader {
 public:
  // `ring` is the region's address in the target and `header` what atrace
  // wrote at its start (make_layout()). `commit_wait_ticks`: how long a
  // reserved slot may stay uncommitted, in TSC ticks (tsc_clock.h converts
  // kFastPathCommitWaitNs). `start_tsc`: a time before any trampoline could
  // write (the reader is made before the functions are patched).
  RingReader(MemoryAccess& memory, uint64_t ring, const RingHeader& header,
             uint64_t commit_wait_ticks, uint64_t start_tsc);

  // Appends the new records of every lane to `out`, lane by lane in slot
  // order, and gives their slots back. `now_tsc` is the TSC read just
  // before the call. False when the target's memory could not be read
  // (nothing was taken) or the tails not written back (the records were
  // taken; the next drain writes the tails again); errno says why (ESRCH:
  // the target is gone).
  // `writers_gone`: no writer can commit any more (the process exited, or
  // its patches were undone with no thread left inside the trampolines):
  // every slot still reserved and not committed is given up now.
  // `max_per_lane`: at most that many slots of a lane are looked at (a
  // bounded batch for the consumer); the rest waits for the next drain.
  // A record handed out carries its lane (its CPU) in `seq`: the commit
  // mark is of no more use once taken.
  bool drain(uint64_t now_tsc, std::vector<FastRecord>& out, bool writers_gone = false,
             uint64_t max_per_lane = UINT64_MAX);
  // Every lane's tail reached the head its last drain read.
  bool drained() const;
  // The TSC up to which the last drain took every lane's records: the
  // newest record taken from each lane it left slots of for the next drain
  // (max_per_lane), and the earliest time a slot the tail waits at (reserved,
  // not committed yet, not given up) can have been reserved; the earliest of
  // those, UINT64_MAX when there is none. A consumer that orders records by
  // time releases nothing later: a writer preempted between its reservation
  // and its commit (up to the commit wait) still lands in order, where a
  // later record of its thread may already have been taken from another
  // lane (it moved CPUs) or after it in the same one.
  uint64_t complete_until() const;

  // Gives read pages back and allocates pages ahead of the writers
  // (lane_pages.h); the tails are then published in whole pages. For a ring
  // atrace maps itself; `pages` outlives the reader.
  void set_pages(LanePages* pages) { pages_ = pages; }

  const std::vector<LaneStats>& lanes() const { return stats_; }
  // Lane `i`'s tail: every slot before it is read or given up.
  uint64_t lane_tail(uint32_t i) const { return lanes_[i].tail; }
  uint64_t lost() const;  // every lane's lost()

 private:
  struct Lane {
    bool started = false;
    uint64_t tail = 0;  // the first slot not taken: what the target sees
    uint64_t head = 0;  // as the last drain read it
    uint64_t looked_to =
        0;                  // the slots before it were read by a drain (not by a capped one's rest)
    bool capped = false;    // the last drain stopped at max_per_lane
    uint64_t last_tsc = 0;  // the newest record's taken
    // The tail waits at a slot reserved and not committed: the earliest
    // time it can have been reserved (UINT64_MAX: the tail waits at none).
    uint64_t waiting_since = UINT64_MAX;
    // Slots past the tail taken already (while the tail waits at a slot
    // reserved but not committed).
    std::set<uint64_t> ahead;
    uint64_t published = 0;  // the tail last written to the target
    // (drain time, head read then): a slot at or past a drain's head was
    // reserved after that drain, which bounds how long it has waited.
    std::deque<std::pair<uint64_t, uint64_t>> heads;
    // Slots given up, in order: a late commit is still taken (take_late).
    std::deque<uint64_t> given_up;
  };
  // At most this many given-up slots watched per lane (a thread killed in
  // the trampoline leaves one for good; each is one read a drain).
  static constexpr size_t kGivenUpKept = 1024;
  void take_late(uint32_t lane, uint64_t head, std::vector<FastRecord>& out);

  uint64_t slot_addr(uint32_t lane, uint64_t index) const;
  uint64_t reserved_since(const Lane& lane, uint64_t index, uint64_t now_tsc) const;

  MemoryAccess& memory_;
  LanePages* pages_ = nullptr;
  uint64_t ring_;
  RingHeader header_;
  uint64_t wait_;
  std::vector<Lane> lanes_;
  std::vector<LaneStats> stats_;
  std::vector<LaneHeader> headers_;         // read each drain
  std::vector<FastRecord> first_, second_;  // the two reads of the slots
};

// Sorts one drain's records (of every lane) into time order: by TSC, then,
// at equal TSCs (different threads, or a writer's rdtscp granularity), a
// thread's exits before its entries (a call ends before the next starts at
// the same tick), else the lanes' order.
void merge_by_time(std::vector<FastRecord>& records);

}  // namespace atrace::fastpath
