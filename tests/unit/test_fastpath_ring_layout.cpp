#include <gtest/gtest.h>

#include <stdexcept>

#include "fastpath/ring_layout.h"

namespace atrace::fastpath {

TEST(FastPathRingLayout, RegionsArePageAlignedAndDoNotOverlap) {
  RingGeometry g;
  g.lane_count = 2;
  g.lane_slots = 1024;
  g.thread_slots = 4;
  g.shadow_depth = 100;
  const RingHeader h = make_layout(g);
  EXPECT_EQ(h.magic, kRingMagic);
  EXPECT_EQ(h.lanes_offset, 4096u);
  // Two lane headers fit in the second page; 2 x 1024 records of 32 bytes
  // take 64 KiB from the third page on.
  EXPECT_EQ(h.records_offset, 8192u);
  EXPECT_EQ(h.threads_offset, 8192u + 65536u);
  // A thread slot: 16 bytes of header and 100 frames of 24 bytes, rounded
  // up to a cache line: 2416 -> 2432 bytes; four of them in one page.
  EXPECT_EQ(thread_slot_bytes(100), 2432u);
  EXPECT_EQ(h.total_bytes, 8192u + 65536u + 12288u);
}

TEST(FastPathRingLayout, RefusesGeometriesThatAreNotPowersOfTwo) {
  RingGeometry g;
  g.lane_count = 3;
  EXPECT_THROW(make_layout(g), std::invalid_argument);
  g = RingGeometry{};
  g.shadow_depth = 0;
  EXPECT_THROW(make_layout(g), std::invalid_argument);
}

}  // namespace atrace::fastpath
