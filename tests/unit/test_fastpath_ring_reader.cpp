// The fast path's ring reader on a ring in this process's memory, written
// the way the trampolines write it (a reservation on the lane's head while
// head - tail < lane_slots, the fields, then seq = index + 1).
#include <gtest/gtest.h>
#include <unistd.h>
#include <x86intrin.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <thread>

#include "fastpath/memory_access.h"
#include "fastpath/ring_reader.h"

namespace atrace::fastpath {
namespace {

// A region laid out by make_layout, with a writer of its lanes.
class TestRing {
 public:
  explicit TestRing(uint32_t lanes = 2, uint32_t slots = 8) {
    RingGeometry g;
    g.lane_count = lanes;
    g.lane_slots = slots;
    g.thread_slots = 1;
    g.shadow_depth = 1;
    header_ = make_layout(g);
    mem_.reset(static_cast<char*>(std::aligned_alloc(4096, header_.total_bytes)));
    std::memset(mem_.get(), 0, header_.total_bytes);
    std::memcpy(mem_.get(), &header_, sizeof(header_));
  }
  uint64_t addr() const { return reinterpret_cast<uint64_t>(mem_.get()); }
  const RingHeader& header() const { return header_; }
  LaneHeader& lane(uint32_t i) {
    return reinterpret_cast<LaneHeader*>(mem_.get() + header_.lanes_offset)[i];
  }
  FastRecord& slot(uint32_t lane, uint64_t index) {
    auto* records = reinterpret_cast<FastRecord*>(mem_.get() + header_.records_offset);
    return records[uint64_t{lane} * header_.lane_slots + (index & (header_.lane_slots - 1))];
  }
  // The trampoline's reservation: the slot's index, or -1 (counted lost).
  int64_t reserve(uint32_t l) {
    LaneHeader& h = lane(l);
    if (h.head - h.tail >= header_.lane_slots) {
      ++h.lost;
      return -1;
    }
    return static_cast<int64_t>(h.head++);
  }
  void commit(uint32_t l, int64_t index, uint64_t tsc, RecordKind kind = RecordKind::Entry,
              uint64_t tp = 0x7f00, uint32_t fn = 1) {
    FastRecord& r = slot(l, static_cast<uint64_t>(index));
    r.tsc = tsc;
    r.thread_pointer = tp;
    r.function_id = fn;
    r.kind = static_cast<uint16_t>(kind);
    r.depth = 1;
    r.seq = static_cast<uint64_t>(index) + 1;
  }
  // Reserve and commit: the whole trampoline. False when the lane was full.
  bool write(uint32_t l, uint64_t tsc, RecordKind kind = RecordKind::Entry) {
    int64_t i = reserve(l);
    if (i < 0) return false;
    commit(l, i, tsc, kind);
    return true;
  }

 private:
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  RingHeader header_;
  std::unique_ptr<char, Free> mem_;
};

std::vector<uint64_t> tscs(const std::vector<FastRecord>& v) {
  std::vector<uint64_t> out;
  out.reserve(v.size());
  for (const auto& r : v) out.push_back(r.tsc);
  return out;
}

constexpr uint64_t kWait = 1000;  // ticks a reserved slot may wait

TEST(FastPathRingReader, TakesEachLaneInOrderWithFourSystemCallsPerDrain) {
  TestRing ring;
  LocalMemory mem;
  RingReader reader(mem, ring.addr(), ring.header(), kWait, 0);
  for (uint64_t t : {10, 11, 12}) ASSERT_TRUE(ring.write(0, t));
  for (uint64_t t : {5, 13}) ASSERT_TRUE(ring.write(1, t));
  std::vector<FastRecord> out;
  ASSERT_TRUE(reader.drain(100, out));
  EXPECT_EQ(tscs(out), (std::vector<uint64_t>{10, 11, 12, 5, 13}));
  // Headers, slots, slots again, tails: whatever the number of records.
  EXPECT_EQ(mem.calls(), 4u);
  EXPECT_EQ(ring.lane(0).tail, 3u);
  EXPECT_EQ(ring.lane(1).tail, 2u);
  EXPECT_EQ(reader.lanes()[0].taken, 3u);
  EXPECT_EQ(reader.lanes()[1].taken, 2u);
  EXPECT_EQ(reader.lost(), 0u);
  // Nothing new: the headers only, no tail written.
  out.clear();
  ASSERT_TRUE(reader.drain(200, out));
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(mem.calls(), 5u);
}

TEST(FastPathRingReader, FollowsALaneAroundItsEnd) {
  TestRing ring(1, 8);
  LocalMemory mem;
  RingReader reader(mem, ring.addr(), ring.header(), kWait, 0);
  std::vector<FastRecord> out;
  for (uint64_t t = 1; t <= 6; ++t) ASSERT_TRUE(ring.write(0, t));
  ASSERT_TRUE(reader.drain(100, out));
  for (uint64_t t = 7; t <= 14; ++t) ASSERT_TRUE(ring.write(0, t));  // slots 6..13: wraps
  out.clear();
  ASSERT_TRUE(reader.drain(200, out));
  EXPECT_EQ(tscs(out), (std::vector<uint64_t>{7, 8, 9, 10, 11, 12, 13, 14}));
  EXPECT_EQ(ring.lane(0).tail, 14u);
  EXPECT_EQ(reader.lost(), 0u);
}

TEST(FastPathRingReader, CountsWhatAFullLaneDropped) {
  TestRing ring(1, 8);
  LocalMemory mem;
  RingReader reader(mem, ring.addr(), ring.header(), kWait, 0);
  int written = 0;
  for (uint64_t t = 1; t <= 11; ++t) written += ring.write(0, t);
  EXPECT_EQ(written, 8);
  std::vector<FastRecord> out;
  ASSERT_TRUE(reader.drain(100, out));
  EXPECT_EQ(out.size(), 8u);
  EXPECT_EQ(reader.lanes()[0].full, 3u);
  EXPECT_EQ(reader.lanes()[0].lost(), 3u);
  // Room again once the tail was written back.
  EXPECT_TRUE(ring.write(0, 12));
}

// A writer preempted between its reservation and its commit holds the
// tail, not the records after it; its record is taken once committed.
TEST(FastPathRingReader, TakesRecordsPastASlotNotCommittedYet) {
  TestRing ring(1, 8);
  LocalMemory mem;
  RingReader reader(mem, ring.addr(), ring.header(), kWait, 0);
  const int64_t held = ring.reserve(0);
  ASSERT_TRUE(ring.write(0, 21));
  ASSERT_TRUE(ring.write(0, 22));
  std::vector<FastRecord> out;
  ASSERT_TRUE(reader.drain(100, out));
  EXPECT_EQ(tscs(out), (std::vector<uint64_t>{21, 22}));
  EXPECT_EQ(ring.lane(0).tail, 0u);  // the slot is still the writer's
  // Nothing later than the reader's start is complete: the held record
  // may be older than 21 and 22.
  EXPECT_EQ(reader.complete_until(), 0u);
  ring.commit(0, held, 20);
  ASSERT_TRUE(ring.write(0, 23));
  out.clear();
  ASSERT_TRUE(reader.drain(200, out));
  EXPECT_EQ(tscs(out), (std::vector<uint64_t>{20, 23}));
  EXPECT_EQ(ring.lane(0).tail, 4u);
  EXPECT_EQ(reader.complete_until(), UINT64_MAX);
  EXPECT_EQ(reader.lost(), 0u);
}

// A slot never committed is given up once reserved for the wait, counted
// in `skipped`; its writer's commit after the lane came round to the slot
// is never taken for a later record.
TEST(FastPathRingReader, GivesUpASlotReservedLongerThanTheWait) {
  TestRing ring(1, 8);
  LocalMemory mem;
  RingReader reader(mem, ring.addr(), ring.header(), kWait, 0);
  std::vector<FastRecord> out;
  ASSERT_TRUE(reader.drain(500, out));  // head 0: nothing reserved at 500
  const int64_t held = ring.reserve(0);
  ASSERT_TRUE(ring.write(0, 600));
  // Reserved after the drain at 500: at 1499 it may have waited 999 ticks.
  ASSERT_TRUE(reader.drain(1499, out));
  EXPECT_EQ(tscs(out), (std::vector<uint64_t>{600}));
  EXPECT_EQ(ring.lane(0).tail, 0u);
  EXPECT_EQ(reader.lanes()[0].skipped, 0u);
  EXPECT_EQ(reader.complete_until(), 500u);  // held back while the slot may commit
  out.clear();
  ASSERT_TRUE(reader.drain(1500, out));
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(ring.lane(0).tail, 2u);
  EXPECT_EQ(reader.complete_until(), UINT64_MAX);  // given up: no longer waited for
  EXPECT_EQ(reader.lanes()[0].skipped, 1u);
  EXPECT_EQ(reader.lost(), 1u);
  for (uint64_t t = 1700; t < 1707; ++t) ASSERT_TRUE(ring.write(0, t));  // slots 2..8
  ASSERT_TRUE(reader.drain(1800, out));
  EXPECT_EQ(out.size(), 7u);
  EXPECT_EQ(out.back().tsc, 1706u);  // index 8, the held slot's place
  EXPECT_EQ(ring.lane(0).tail, 9u);
  // The late writer commits its old index after the lane came round: not
  // taken, still lost.
  out.clear();
  ring.commit(0, held, 550);
  ASSERT_TRUE(reader.drain(1900, out));
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(reader.lost(), 1u);
  EXPECT_EQ(reader.lanes()[0].late, 0u);
}

// A writer that commits after its slot was given up, before the lane came
// round to it (preempted longer than the wait): its record is taken late
// and no longer counted lost.
TEST(FastPathRingReader, TakesALateCommitBeforeTheLaneComesRound) {
  TestRing ring(1, 8);
  LocalMemory mem;
  RingReader reader(mem, ring.addr(), ring.header(), kWait, 0);
  std::vector<FastRecord> out;
  ASSERT_TRUE(reader.drain(500, out));
  const int64_t held = ring.reserve(0);
  ASSERT_TRUE(ring.write(0, 600));
  ASSERT_TRUE(reader.drain(900, out));  // found reserved
  ASSERT_TRUE(reader.drain(1600, out));
  EXPECT_EQ(reader.lanes()[0].skipped, 1u);
  out.clear();
  ring.commit(0, held, 550);
  ASSERT_TRUE(ring.write(0, 1700));
  ASSERT_TRUE(reader.drain(1800, out));
  EXPECT_EQ(tscs(out), (std::vector<uint64_t>{550, 1700}));
  EXPECT_EQ(reader.lanes()[0].late, 1u);
  EXPECT_EQ(reader.lanes()[0].skipped, 0u);
  EXPECT_EQ(reader.lost(), 0u);
  // Taken once.
  out.clear();
  ASSERT_TRUE(reader.drain(1900, out));
  EXPECT_TRUE(out.empty());
}

// A drain that comes late after the one before (a loaded machine) finds a
// slot reserved longer than the wait may allow, for all it knows; it was
// not found reserved before, so its writer may only be in the middle of its
// record: the slot waits for the next drain, and nothing past its possible
// reservation leaves the reorder window meanwhile.
TEST(FastPathRingReader, ASlotFirstSeenAfterALateDrainWaitsForTheNext) {
  TestRing ring(1, 8);
  LocalMemory mem;
  RingReader reader(mem, ring.addr(), ring.header(), kWait, 0);
  std::vector<FastRecord> out;
  ASSERT_TRUE(reader.drain(500, out));
  const int64_t held = ring.reserve(0);
  ASSERT_TRUE(ring.write(0, 2400));
  ASSERT_TRUE(reader.drain(2500, out));  // 2,000 ticks after the last drain
  EXPECT_EQ(tscs(out), (std::vector<uint64_t>{2400}));
  EXPECT_EQ(reader.lanes()[0].skipped, 0u);
  EXPECT_EQ(reader.complete_until(), 500u);
  ring.commit(0, held, 2399);
  out.clear();
  ASSERT_TRUE(reader.drain(2505, out));
  EXPECT_EQ(tscs(out), (std::vector<uint64_t>{2399}));
  EXPECT_EQ(ring.lane(0).tail, 2u);
  EXPECT_EQ(reader.complete_until(), UINT64_MAX);
  EXPECT_EQ(reader.lost(), 0u);
  EXPECT_EQ(reader.lanes()[0].late, 0u);
}

// A record committed while the reader was between its two reads of the
// slots waits for the next drain (its fields in the first read may be
// older than its seq).
class CommitBetweenReads : public MemoryAccess {
 public:
  explicit CommitBetweenReads(std::function<void()> hook) : hook_(std::move(hook)) {}
  bool read(std::span<const MemoryPiece> p) override {
    bool ok = local_.read(p);
    if (++reads_ == 2) hook_();  // after the first read of the slots
    return ok;
  }
  bool write(std::span<const MemoryPiece> p) override { return local_.write(p); }

 private:
  LocalMemory local_;
  std::function<void()> hook_;
  int reads_ = 0;
};

TEST(FastPathRingReader, ARecordCommittedBetweenTheReadsWaitsForTheNextDrain) {
  TestRing ring(1, 8);
  const int64_t held = ring.reserve(0);
  CommitBetweenReads mem([&] { ring.commit(0, held, 30); });
  RingReader reader(mem, ring.addr(), ring.header(), kWait, 0);
  std::vector<FastRecord> out;
  ASSERT_TRUE(reader.drain(100, out));
  EXPECT_TRUE(out.empty());
  ASSERT_TRUE(reader.drain(200, out));
  EXPECT_EQ(tscs(out), (std::vector<uint64_t>{30}));
}

TEST(FastPathRingReader, DropsAndCountsAKindNoWriterWrites) {
  TestRing ring(1, 8);
  LocalMemory mem;
  RingReader reader(mem, ring.addr(), ring.header(), kWait, 0);
  ASSERT_TRUE(ring.write(0, 1));
  ASSERT_TRUE(ring.write(0, 2, static_cast<RecordKind>(9)));
  std::vector<FastRecord> out;
  ASSERT_TRUE(reader.drain(100, out));
  EXPECT_EQ(tscs(out), (std::vector<uint64_t>{1}));
  EXPECT_EQ(reader.lanes()[0].malformed, 1u);
  EXPECT_EQ(ring.lane(0).tail, 2u);
}

// Lanes are per CPU: one thread's entry in lane 0 and exit in lane 1.
TEST(FastPathRingReader, MergeOrdersByTimeThenEndsBeforeStarts) {
  TestRing ring;
  LocalMemory mem;
  RingReader reader(mem, ring.addr(), ring.header(), kWait, 0);
  ASSERT_TRUE(ring.write(0, 100, RecordKind::Entry));
  ASSERT_TRUE(ring.write(0, 300, RecordKind::Entry));
  ASSERT_TRUE(ring.write(1, 200, RecordKind::Exit));
  ASSERT_TRUE(ring.write(1, 300, RecordKind::Exit));
  std::vector<FastRecord> out;
  ASSERT_TRUE(reader.drain(1000, out));
  merge_by_time(out);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(tscs(out), (std::vector<uint64_t>{100, 200, 300, 300}));
  EXPECT_EQ(out[2].kind, static_cast<uint16_t>(RecordKind::Exit));
  EXPECT_EQ(out[3].kind, static_cast<uint16_t>(RecordKind::Entry));
}

// The ring of another process is read with process_vm_readv: here this
// process's own, through its pid, in one call for several ranges.
TEST(FastPathRingReader, ProcessMemoryBatchesRangesAndFailsOnUnmappedOnes) {
  TestRing ring;
  VmMemory mem(getpid());
  RingReader reader(mem, ring.addr(), ring.header(), kWait, 0);
  for (uint64_t t = 1; t <= 5; ++t) ASSERT_TRUE(ring.write(t % 2, t));
  std::vector<FastRecord> out;
  ASSERT_TRUE(reader.drain(100, out));
  EXPECT_EQ(tscs(out), (std::vector<uint64_t>{2, 4, 1, 3, 5}));
  EXPECT_EQ(mem.calls(), 4u);
  EXPECT_EQ(ring.lane(0).tail, 2u);
  EXPECT_EQ(ring.lane(1).tail, 3u);
  char buf[8];
  errno = 0;
  EXPECT_FALSE(mem.read(8, buf, sizeof buf));  // page 0 is never mapped
  EXPECT_EQ(errno, EFAULT);
}

// Two threads writing as the trampolines do (rdtscp's CPU picks the lane,
// a compare-and-swap reserves, seq is stored last with release order)
// while the reader drains the same memory through process_vm_readv: every
// record is taken or counted, none twice, none torn, and each thread's
// records come in its own order once each drain is merged by time.
TEST(FastPathRingReader, DrainsWritersRunningConcurrently) {
  TestRing ring(2, 4096);
  VmMemory mem(getpid());
  RingReader reader(mem, ring.addr(), ring.header(), /*commit_wait_ticks=*/UINT64_MAX / 2, 0);
  constexpr uint32_t kWriters = 2, kEach = 100'000;
  std::atomic<uint32_t> done{0};
  auto writer = [&](uint32_t who) {
    for (uint32_t n = 1; n <= kEach; ++n) {
      for (int i = 0; i < 20; ++i) _mm_pause();  // a function's worth of work between records
      unsigned cpu = 0;
      const uint64_t tsc = __rdtscp(&cpu);
      const uint32_t lane = (cpu & 0xfff) & (ring.header().lane_count - 1);
      LaneHeader& h = ring.lane(lane);
      std::atomic_ref<uint64_t> head(h.head), tail(h.tail), lost(h.lost);
      uint64_t index = head.load(std::memory_order_relaxed);
      bool reserved = false;
      while (index - tail.load(std::memory_order_acquire) < ring.header().lane_slots)
        if (head.compare_exchange_weak(index, index + 1)) {
          reserved = true;
          break;
        }
      if (!reserved) {
        lost.fetch_add(1);
        continue;
      }
      FastRecord& r = ring.slot(lane, index);
      r.tsc = tsc;
      r.thread_pointer = who;
      r.function_id = n;
      r.kind = static_cast<uint16_t>(RecordKind::Entry);
      r.depth = 0;
      std::atomic_ref<uint64_t>(r.seq).store(index + 1, std::memory_order_release);
    }
    done.fetch_add(1);
  };
  std::vector<std::thread> threads;
  for (uint32_t w = 1; w <= kWriters; ++w) threads.emplace_back(writer, w);
  std::map<uint64_t, uint32_t> last;  // writer -> last sequence number seen
  uint64_t taken = 0, drains = 0, out_of_order = 0, foreign = 0;
  bool drained = true;
  std::vector<FastRecord> out;
  for (bool final = false; !final && drained;) {
    final = done.load() == kWriters;  // one more drain after both ended
    out.clear();
    drained = reader.drain(__rdtsc(), out);
    ++drains;
    merge_by_time(out);
    for (const FastRecord& r : out) {
      if (r.thread_pointer < 1 || r.thread_pointer > kWriters ||
          r.kind != static_cast<uint16_t>(RecordKind::Entry)) {
        ++foreign;
        continue;
      }
      out_of_order += r.function_id <= last[r.thread_pointer];
      last[r.thread_pointer] = r.function_id;
    }
    taken += out.size();
  }
  for (auto& t : threads) t.join();
  ASSERT_TRUE(drained);
  EXPECT_EQ(foreign, 0u);
  uint64_t full = 0, skipped = 0;
  for (const LaneStats& s : reader.lanes()) {
    full += s.full;
    skipped += s.skipped + s.malformed;
  }
  EXPECT_EQ(taken + full, uint64_t{kWriters} * kEach);
  EXPECT_EQ(skipped, 0u);
  EXPECT_EQ(out_of_order, 0u);
  EXPECT_LE(mem.calls(), 4 * drains);  // at most four a drain, whatever it took
}

}  // namespace
}  // namespace atrace::fastpath

namespace atrace::fastpath {
namespace {

// A bounded drain takes at most max_per_lane slots of each lane and says
// up to when every lane was read (the newest record of a lane it left
// slots of), and whether anything is left.
TEST(FastPathRingReaderBatch, TakesAtMostABatchPerLaneAndSaysHowFarItGot) {
  TestRing ring(2, 16);
  LocalMemory mem;
  RingReader reader(mem, ring.addr(), ring.header(), kWait, 0);
  for (uint64_t t = 100; t < 110; ++t) ASSERT_TRUE(ring.write(0, t));
  for (uint64_t t = 200; t < 203; ++t) ASSERT_TRUE(ring.write(1, t));
  std::vector<FastRecord> out;
  ASSERT_TRUE(reader.drain(1000, out, false, 4));
  EXPECT_EQ(tscs(out), (std::vector<uint64_t>{100, 101, 102, 103, 200, 201, 202}));
  EXPECT_EQ(reader.complete_until(), 103u);
  EXPECT_FALSE(reader.drained());
  out.clear();
  ASSERT_TRUE(reader.drain(1001, out, false, 4));
  EXPECT_EQ(tscs(out), (std::vector<uint64_t>{104, 105, 106, 107}));
  EXPECT_EQ(reader.complete_until(), 107u);
  out.clear();
  ASSERT_TRUE(reader.drain(1002, out, false, 4));
  EXPECT_EQ(tscs(out), (std::vector<uint64_t>{108, 109}));
  EXPECT_EQ(reader.complete_until(), UINT64_MAX);
  EXPECT_TRUE(reader.drained());
  EXPECT_EQ(ring.lane(0).tail, 10u);
  EXPECT_EQ(reader.lost(), 0u);
}

}  // namespace
}  // namespace atrace::fastpath
