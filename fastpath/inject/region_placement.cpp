#include "fastpath/inject/region_placement.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace atrace::fastpath {

namespace {

constexpr uint64_t kPage = 4096;
constexpr uint64_t kGuard = uint64_t{1} << 20;
constexpr uint64_t kStackRoom = uint64_t{256} << 20;
constexpr uint64_t kUserTop = 0x7ffffffff000ull;  // 47-bit user space

uint64_t page_down(uint64_t v) { return v & ~(kPage - 1); }
uint64_t page_up(uint64_t v) { return (v + kPage - 1) & ~(kPage - 1); }

}  // namespace

std::vector<MapsEntry> parse_maps(std::string_view text) {
  std::vector<MapsEntry> out;
  std::istringstream in{std::string(text)};
  std::string line;
  while (std::getline(in, line)) {
    // start-end perms offset dev inode [name]
    std::istringstream fields(line);
    std::string range, perms, offset, dev, inode;
    if (!(fields >> range >> perms >> offset >> dev >> inode)) continue;
    size_t dash = range.find('-');
    if (dash == std::string::npos) continue;
    MapsEntry e;
    e.start = std::strtoull(range.substr(0, dash).c_str(), nullptr, 16);
    e.end = std::strtoull(range.substr(dash + 1).c_str(), nullptr, 16);
    e.perms = perms;
    std::string rest;
    std::getline(fields, rest);
    size_t first = rest.find_first_not_of(' ');
    e.name = first == std::string::npos ? "" : rest.substr(first);
    out.push_back(std::move(e));
  }
  std::sort(out.begin(), out.end(),
            [](const MapsEntry& a, const MapsEntry& b) { return a.start < b.start; });
  return out;
}

AddressRange module_range(const std::vector<MapsEntry>& maps, std::string_view path) {
  AddressRange r{~uint64_t{0}, 0};
  for (const MapsEntry& e : maps) {
    if (e.name != path) continue;
    r.start = std::min(r.start, e.start);
    r.end = std::max(r.end, e.end);
  }
  if (r.end == 0) return {};
  return r;
}

std::vector<uint64_t> near_candidates(const std::vector<MapsEntry>& maps, AddressRange module,
                                      uint64_t size, uint64_t min_address) {
  std::vector<uint64_t> below, above;
  size = page_up(size);
  if (size == 0 || module.end <= module.start) return {};
  // r may lie in [module.end - reach, module.start + reach - size].
  uint64_t win_lo = module.end > kRel32Reach ? module.end - kRel32Reach : 0;
  if (module.start + kRel32Reach < size) return {};
  uint64_t win_hi = module.start + kRel32Reach - size;
  win_lo = std::max({win_lo, page_up(min_address), kGuard});
  win_hi = std::min(win_hi, kUserTop - size);
  if (win_lo > win_hi) return {};

  // The free gaps: between mappings, the [stack]'s growth room counted as used.
  uint64_t prev_end = 0;
  auto consider = [&](uint64_t gap_lo, uint64_t gap_hi) {
    if (gap_hi <= gap_lo || gap_hi - gap_lo < size + 2 * kGuard) return;
    uint64_t lo = std::max(page_up(gap_lo + kGuard), win_lo);
    uint64_t hi_end = gap_hi - kGuard;  // the region ends at or below
    if (hi_end < size) return;
    uint64_t hi = std::min(page_down(hi_end - size), page_down(win_hi));
    if (lo > hi) return;
    if (gap_hi <= module.start) below.push_back(lo);  // as low as reach allows
    else above.push_back(hi);                         // as high as reach allows
  };
  for (const MapsEntry& e : maps) {
    if (e.start >= kUserTop) break;  // [vsyscall]
    uint64_t used_from = e.start;
    if (e.name == "[stack]") used_from = e.start > kStackRoom ? e.start - kStackRoom : 0;
    consider(prev_end, used_from);
    prev_end = std::max(prev_end, e.end);
  }
  consider(prev_end, kUserTop);
  // Below: the nearest gap first (it has the most room in reach); above: the
  // same.
  std::reverse(below.begin(), below.end());
  below.insert(below.end(), above.begin(), above.end());
  return below;
}

}  // namespace atrace::fastpath
