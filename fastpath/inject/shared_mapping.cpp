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

#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

namespace atrace::fastpath {

namespace {

// Closes the target's descriptor whatever happens after its creation.
struct RemoteFd {
  RemoteSyscall& sys;
  long fd;
  ~RemoteFd() {
    try {
      sys.call(SYS_close, static_cast<uint64_t>(fd));
    } catch (const InjectError&) {  // the process is gone: so is its descriptor
    }
  }
};

}  // namespace

SharedMapping SharedMapping::replace(RemoteSyscall& sys, uint64_t address, uint64_t size,
                                     const std::string& name, uint64_t scratch) {
  const pid_t pid = sys.memory().pid();
  // memfd_create reads the name from the target's memory: the range itself
  // unless told otherwise, whose old content goes anyway.
  if (!scratch) scratch = address;
  std::vector<std::byte> text(name.size() + 1);
  std::memcpy(text.data(), name.data(), name.size());
  sys.memory().write_any(scratch, text);
  const long fd =
      static_cast<long>(sys.checked("memfd_create", SYS_memfd_create, scratch, MFD_CLOEXEC));
  RemoteFd target_fd{sys, fd};
  sys.checked("ftruncate", SYS_ftruncate, static_cast<uint64_t>(fd), size);
  const uint64_t at = sys.checked("mmap", SYS_mmap, address, size, PROT_READ | PROT_WRITE,
                                  MAP_SHARED | MAP_FIXED, static_cast<uint64_t>(fd), 0);
  if (at != address) throw InjectError("mmap of the shared ring landed elsewhere");

  UniqueFd pidfd(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
  if (!pidfd) throw InjectError(errno_message("pidfd_open", errno));
  UniqueFd mine(static_cast<int>(syscall(SYS_pidfd_getfd, pidfd.get(), static_cast<int>(fd), 0)));
  if (!mine)
    throw InjectError(errno_message("pidfd_getfd of the ring's memfd (Linux 5.6 or later)", errno));
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
