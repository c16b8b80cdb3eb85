// Where a region can go in a process's address space, from its
// /proc/PID/maps: a free gap within rel32 reach of a module (the code
// region, which patched entries jump to with `jmp rel32` and which jumps
// back), or anywhere. Pure functions of the maps text, unit-tested.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace atrace::fastpath {

struct MapsEntry {
  uint64_t start = 0;
  uint64_t end = 0;
  std::string perms;  // "r-xp"
  std::string name;   // path, [heap], [stack], [anon:...], or empty
};

std::vector<MapsEntry> parse_maps(std::string_view text);

// [start, end) of every mapping of the file `path` (0, 0 when none).
struct AddressRange {
  uint64_t start = 0;
  uint64_t end = 0;
  bool contains(uint64_t a) const { return a >= start && a < end; }
  bool overlaps(const AddressRange& o) const { return start < o.end && o.start < end; }
};
AddressRange module_range(const std::vector<MapsEntry>& maps, std::string_view path);

// How far a rel32 jump or call may reach, with a margin for the
// instruction's own length and the trampolines' offsets.
inline constexpr uint64_t kRel32Reach = (uint64_t{1} << 31) - (uint64_t{1} << 16);

// Page-aligned addresses for a region of `size` bytes (a page multiple)
// from which every byte of the region reaches every byte of `module` and
// back within kRel32Reach, best first. Each sits in a free gap, 1 MiB away
// from its neighbours, never in the 256 MiB below [stack] (its growth
// area), and as far from the module as the reach allows, so that the heap
// above an executable keeps its room to grow; gaps below the module come
// first (nothing grows down into them but mmap's own allocations).
std::vector<uint64_t> near_candidates(const std::vector<MapsEntry>& maps, AddressRange module,
                                      uint64_t size, uint64_t min_address);

}  // namespace atrace::fastpath
