#include "fastpath/inject/shared_mapping.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "base/unique_fd.h"
#include "fastpath/inject/inject_error.h"
#include "fastpath/inject/remote_memfd.h"

namespace atrace::fastpath {

SharedMapping SharedMapping::replace(RemoteSyscall& sys, uint64_t address, uint64_t size,
                                     const std::string& name, uint64_t scratch) {
  // memfd_create reads the name from the target's memory: the range itself
  // unless told otherwise, whose old content goes anyway.
  if (!scratch) scratch = address;
  RemoteMemfd file(sys, name, size, scratch);
  const uint64_t at = sys.checked("mmap", SYS_mmap, address, size, PROT_READ | PROT_WRITE,
                                  MAP_SHARED | MAP_FIXED, file.target_fd(), 0);
  if (at != address) throw InjectError("mmap of the shared ring landed elsewhere");
  UniqueFd mine = file.take();
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, mine.get(), 0);
  if (p == MAP_FAILED) throw InjectError(errno_message("mmap of the shared ring", errno));
  return SharedMapping(static_cast<uint8_t*>(p), size, address);
}

SharedMapping::SharedMapping(SharedMapping&& o) noexcept
    : local_(std::exchange(o.local_, nullptr)),
      size_(std::exchange(o.size_, 0)),
      address_(o.address_) {}

SharedMapping::~SharedMapping() {
  if (local_) munmap(local_, size_);
}

}  // namespace atrace::fastpath
