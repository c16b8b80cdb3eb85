#include "record/map_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "base/diagnostics.h"
#include "record/record_error.h"

namespace atrace {

MapMemory::MapMemory(int fd, size_t bytes, const char* what) {
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  len_ = (bytes + page - 1) / page * page;
  void* m = mmap(nullptr, len_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED)
    throw RecordError(std::string("cannot map ") + what + ": " + base::errno_text(errno));
  addr_ = m;
}

MapMemory::~MapMemory() {
  if (addr_) munmap(addr_, len_);
}

MapMemory::MapMemory(MapMemory&& o) noexcept
    : addr_(std::exchange(o.addr_, nullptr)), len_(std::exchange(o.len_, 0)) {}

MapMemory& MapMemory::operator=(MapMemory&& o) noexcept {
  if (this != &o) {
    if (addr_) munmap(addr_, len_);
    addr_ = std::exchange(o.addr_, nullptr);
    len_ = std::exchange(o.len_, 0);
  }
  return *this;
}

}  // namespace atrace
