// fastpath/lane_pages.h on a memfd mapped here, as atrace maps the lanes:
// pages ahead of a lane's head are allocated (without a writer touching
// them), pages released behind the reader go back to the system, and
// nothing past what the writers may reach (tail + a lane) is allocated.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <vector>

#include "base/unique_fd.h"
#include "fastpath/lane_pages.h"

namespace atrace::fastpath {
namespace {

constexpr uint64_t kPage = 4096;
constexpr uint64_t kSlots = 1u << 16;  // 2 MiB a lane
constexpr uint64_t kLaneBytes = kSlots * sizeof(FastRecord);

// Two lanes' headers and records in one memfd, mapped shared.
class SharedLanes {
 public:
  SharedLanes() {
    fd_.reset(memfd_create("test-lanes", MFD_CLOEXEC));
    EXPECT_TRUE(fd_);
    EXPECT_EQ(ftruncate(fd_.get(), static_cast<off_t>(kPage + 2 * kLaneBytes)), 0);
    void* p =
        mmap(nullptr, kPage + 2 * kLaneBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_.get(), 0);
    EXPECT_NE(p, MAP_FAILED);
    base_ = static_cast<uint8_t*>(p);
  }
  ~SharedLanes() { munmap(base_, kPage + 2 * kLaneBytes); }
  LaneHeader* headers() { return reinterpret_cast<LaneHeader*>(base_); }
  uint8_t* records() { return base_ + kPage; }
  // Resident pages of lane `lane`'s records [from, to) (slot indices).
  size_t resident(uint32_t lane, uint64_t from, uint64_t to) {
    uint8_t* at = records() + (lane * kSlots + from) * sizeof(FastRecord);
    const size_t pages = (to - from) * sizeof(FastRecord) / kPage;
    std::vector<unsigned char> in(pages);
    EXPECT_EQ(mincore(at, pages * kPage, in.data()), 0);
    size_t n = 0;
    for (unsigned char c : in) n += c & 1;
    return n;
  }

 private:
  UniqueFd fd_;
  uint8_t* base_ = nullptr;
};

TEST(FastPathLanePages, AllocatesAheadOfTheHeadAndReleasesBehindTheTail) {
  SharedLanes lanes;
  lanes.headers()[0].head = 0;
  lanes.headers()[1].head = 0;
  constexpr uint64_t kAhead = 512u << 10;  // 16 Ki slots
  constexpr uint64_t kAheadSlots = kAhead / sizeof(FastRecord);
  {
    LanePages pages(lanes.headers(), lanes.records(), 2, kSlots, kAhead);
    pages.populate_ahead();  // the thread does it too: the same pages
    EXPECT_EQ(lanes.resident(0, 0, kAheadSlots), kAhead / kPage);
    EXPECT_EQ(lanes.resident(0, kAheadSlots, kSlots), 0u);
    EXPECT_EQ(lanes.resident(1, 0, kAheadSlots), kAhead / kPage);
    // The writers of lane 0 are 40 Ki slots on, the reader read 32 Ki.
    std::atomic_ref<uint64_t>(lanes.headers()[0].head).store(40u << 10);
    pages.release(0, 0, 32u << 10);
    std::atomic_ref<uint64_t>(lanes.headers()[0].tail).store(32u << 10);
    pages.populate_ahead();
    EXPECT_EQ(lanes.resident(0, 0, 32u << 10), 0u);  // given back
    EXPECT_EQ(lanes.resident(0, 40u << 10, (40u << 10) + kAheadSlots), kAhead / kPage);
    EXPECT_GE(pages.released_bytes(), (32u << 10) * sizeof(FastRecord));
    // A head near the end of lane 1: the pages ahead wrap to its start,
    // but never past tail + a lane (slots not read yet).
    pages.release(1, 0, 16u << 10);
    EXPECT_EQ(lanes.resident(1, 0, 16u << 10), 0u);
    std::atomic_ref<uint64_t>(lanes.headers()[1].head).store(kSlots - 1024);
    pages.populate_ahead();
    EXPECT_EQ(lanes.resident(1, kSlots - 8192, kSlots), 8192 * sizeof(FastRecord) / kPage);
    EXPECT_EQ(lanes.resident(1, 0, 8192), 0u);  // the tail is at 0
    std::atomic_ref<uint64_t>(lanes.headers()[1].tail).store(kSlots - 1024);
    pages.populate_ahead();
    EXPECT_EQ(lanes.resident(1, 0, 8192), 8192 * sizeof(FastRecord) / kPage);
  }
}

}  // namespace
}  // namespace atrace::fastpath
