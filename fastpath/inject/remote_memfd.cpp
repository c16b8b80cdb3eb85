#include "fastpath/inject/remote_memfd.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "fastpath/inject/inject_error.h"

#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

namespace atrace::fastpath {

RemoteMemfd::RemoteMemfd(RemoteSyscall& sys, const std::string& name, uint64_t size,
                         uint64_t scratch)
    : sys_(sys) {
  std::vector<std::byte> text(name.size() + 1);
  std::memcpy(text.data(), name.data(), name.size());
  sys.memory().write_any(scratch, text);
  fd_ = static_cast<long>(sys.checked("memfd_create", SYS_memfd_create, scratch, MFD_CLOEXEC));
  if (const long r = sys.call(SYS_ftruncate, target_fd(), size); r < 0) {
    sys.call(SYS_close, target_fd());
    throw InjectError(errno_message("ftruncate", static_cast<int>(-r)));
  }
}

RemoteMemfd::~RemoteMemfd() {
  if (fd_ < 0) return;
  try {
    sys_.call(SYS_close, target_fd());
  } catch (const InjectError&) {  // the process is gone: so is its descriptor
  }
  fd_ = -1;
}

UniqueFd RemoteMemfd::take() const {
  UniqueFd pidfd(static_cast<int>(syscall(SYS_pidfd_open, sys_.memory().pid(), 0)));
  if (!pidfd) throw InjectError(errno_message("pidfd_open", errno));
  UniqueFd mine(static_cast<int>(syscall(SYS_pidfd_getfd, pidfd.get(), static_cast<int>(fd_), 0)));
  if (!mine) throw InjectError(errno_message("pidfd_getfd of a memfd (Linux 5.6 or later)", errno));
  return mine;
}

}  // namespace atrace::fastpath
