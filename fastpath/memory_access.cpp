#include "fastpath/memory_access.h"

#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <vector>
#include "fastpath/inject/as_pointer.h"

namespace atrace::fastpath {

namespace {

// IOV_MAX from limits.h is 1024 on Linux; the kernel's UIO_MAXIOV too.
constexpr size_t kMaxIov = 1024;

}  // namespace

bool VmMemory::read(std::span<const MemoryPiece> pieces) { return transfer(pieces, false); }

bool VmMemory::write(std::span<const MemoryPiece> pieces) { return transfer(pieces, true); }

bool VmMemory::transfer(std::span<const MemoryPiece> pieces, bool write) {
  std::vector<iovec> local, remote;
  for (size_t at = 0; at < pieces.size(); at += kMaxIov) {
    const size_t n = std::min(kMaxIov, pieces.size() - at);
    local.clear();
    remote.clear();
    size_t want = 0;
    for (size_t i = at; i < at + n; ++i) {
      local.push_back({pieces[i].local, pieces[i].len});
      remote.push_back({as_pointer(pieces[i].addr), pieces[i].len});
      want += pieces[i].len;
    }
    ++calls_;
    ssize_t done = write ? process_vm_writev(pid_, local.data(), n, remote.data(), n, 0)
                         : process_vm_readv(pid_, local.data(), n, remote.data(), n, 0);
    if (done < 0) return false;
    if (static_cast<size_t>(done) != want) {  // a range ended in unmapped memory
      errno = EFAULT;
      return false;
    }
  }
  return true;
}

bool LocalMemory::read(std::span<const MemoryPiece> pieces) {
  ++calls_;
  for (const auto& p : pieces) std::memcpy(p.local, as_pointer(p.addr), p.len);
  return true;
}

bool LocalMemory::write(std::span<const MemoryPiece> pieces) {
  ++calls_;
  for (const auto& p : pieces) std::memcpy(as_pointer(p.addr), p.local, p.len);
  return true;
}

}  // namespace atrace::fastpath
