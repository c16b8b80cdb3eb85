// The memory of a BPF_F_MMAPABLE array map, mapped shared into atrace:
// unmapped exactly once, movable, never copied.
#pragma once

#include <cstddef>

namespace atrace {

class MapMemory {
 public:
  MapMemory() = default;
  // Maps `bytes` (rounded up to pages) of map `fd`; throws RecordError
  // naming `what`.
  MapMemory(int fd, size_t bytes, const char* what);
  ~MapMemory();
  MapMemory(MapMemory&& o) noexcept;
  MapMemory& operator=(MapMemory&& o) noexcept;
  MapMemory(const MapMemory&) = delete;
  MapMemory& operator=(const MapMemory&) = delete;

  void* get() const { return addr_; }

 private:
  void* addr_ = nullptr;
  size_t len_ = 0;
};

}  // namespace atrace
