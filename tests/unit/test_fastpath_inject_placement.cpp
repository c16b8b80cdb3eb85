// Where the fast path's code region goes (fastpath/inject/region_placement.h):
// within rel32 reach of the module, in a free gap, off the stack's growth
// area, as far from the module as the reach allows.
#include <gtest/gtest.h>

#include <algorithm>

#include "fastpath/inject/region_placement.h"

namespace atrace::fastpath {
namespace {

// A PIE executable, its heap, libc, the stack: as /proc/PID/maps shows them.
constexpr const char* kMaps =
    "555555554000-555555555000 r--p 00000000 08:01 1234 /usr/bin/prog\n"
    "555555555000-555555556000 r-xp 00001000 08:01 1234 /usr/bin/prog\n"
    "555555556000-555555558000 rw-p 00002000 08:01 1234 /usr/bin/prog\n"
    "555555558000-555555579000 rw-p 00000000 00:00 0 [heap]\n"
    "7ffff7d80000-7ffff7da8000 r--p 00000000 08:01 99 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
    "7ffff7da8000-7ffff7f3d000 r-xp 00028000 08:01 99 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
    "7ffff7fc3000-7ffff7fc7000 r--p 00000000 00:00 0 [vvar]\n"
    "7ffffffde000-7ffffffff000 rw-p 00000000 00:00 0 [stack]\n"
    "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0 [vsyscall]\n";

// The farthest two bytes, one in the region and one in the module, are
// within reach: the span covering both is.
bool reachable(uint64_t at, uint64_t size, AddressRange m) {
  return std::max(at + size, m.end) - std::min(at, m.start) <= kRel32Reach;
}

bool free_of(const std::vector<MapsEntry>& maps, uint64_t at, uint64_t size) {
  for (const MapsEntry& e : maps)
    if (e.start < at + size + (1u << 20) && at < e.end + (1u << 20)) return false;
  return true;
}

TEST(FastPathPlacement, ParsesMapsAndModuleRange) {
  auto maps = parse_maps(kMaps);
  ASSERT_EQ(maps.size(), 9u);
  EXPECT_EQ(maps[3].name, "[heap]");
  EXPECT_EQ(maps[1].perms, "r-xp");
  AddressRange exe = module_range(maps, "/usr/bin/prog");
  EXPECT_EQ(exe.start, 0x555555554000u);
  EXPECT_EQ(exe.end, 0x555555558000u);
  EXPECT_EQ(module_range(maps, "/nope").end, 0u);
}

TEST(FastPathPlacement, ExecutableGetsAGapBelowItFarthestInReach) {
  auto maps = parse_maps(kMaps);
  AddressRange exe = module_range(maps, "/usr/bin/prog");
  auto c = near_candidates(maps, exe, 1 << 16, 65536);
  ASSERT_FALSE(c.empty());
  EXPECT_LT(c[0], exe.start);  // below first: the heap above keeps its room
  for (uint64_t at : c) {
    EXPECT_EQ(at % 4096, 0u);
    EXPECT_TRUE(reachable(at, 1 << 16, exe)) << std::hex << at;
    EXPECT_TRUE(free_of(maps, at, 1 << 16)) << std::hex << at;
  }
  EXPECT_EQ(c[0], (exe.end - kRel32Reach + 4095) & ~uint64_t{4095});
}

TEST(FastPathPlacement, LibraryAvoidsTheStackGrowthArea) {
  auto maps = parse_maps(kMaps);
  AddressRange libc = module_range(maps, "/usr/lib/x86_64-linux-gnu/libc.so.6");
  auto c = near_candidates(maps, libc, 1 << 20, 65536);
  ASSERT_FALSE(c.empty());
  for (uint64_t at : c) {
    EXPECT_TRUE(reachable(at, 1 << 20, libc)) << std::hex << at;
    EXPECT_TRUE(free_of(maps, at, 1 << 20)) << std::hex << at;
    // Never within 256 MiB below [stack].
    EXPECT_TRUE(at + (1 << 20) <= 0x7ffffffde000u - (256u << 20) || at >= 0x7ffffffff000u)
        << std::hex << at;
  }
}

TEST(FastPathPlacement, NoRoomGivesNoCandidate) {
  // A module at the bottom of the address space with everything around it
  // taken within reach.
  const char* maps_text =
      "00010000-00400000 rw-p 00000000 00:00 0\n"
      "00400000-00401000 r-xp 00000000 08:01 1 /prog\n"
      "00401000-80400000 rw-p 00000000 00:00 0\n";
  auto maps = parse_maps(maps_text);
  auto c = near_candidates(maps, module_range(maps, "/prog"), 1 << 16, 65536);
  EXPECT_TRUE(c.empty());
}

}  // namespace
}  // namespace atrace::fastpath
