// A memfd made IN a stopped target by a remote memfd_create
// (remote_syscall.h), for memory the target maps from a file atrace can
// write and the kernel can probe: the ring's shared lanes
// (shared_mapping.h) and --fast-path=hot's code regions (remote_region.h).
// atrace takes its own descriptor of it with pidfd_getfd (Linux 5.6; it
// needs the ptrace access atrace has); the target's is closed when this
// object goes, so the program sees no new file descriptor.
#pragma once

#include <cstdint>
#include <string>

#include "base/unique_fd.h"
#include "fastpath/inject/remote_syscall.h"

namespace atrace::fastpath {

class RemoteMemfd {
 public:
  // `size` bytes (ftruncate) named `name` (/proc/PID/maps shows
  // /memfd:NAME); memfd_create reads the name from the target's memory: it
  // is written at `scratch` (writable, name.size() + 1 bytes the target
  // does not use now). InjectError when a step fails.
  RemoteMemfd(RemoteSyscall& sys, const std::string& name, uint64_t size, uint64_t scratch);
  ~RemoteMemfd();
  RemoteMemfd(const RemoteMemfd&) = delete;
  RemoteMemfd& operator=(const RemoteMemfd&) = delete;

  // The target's descriptor, for its mmap.
  uint64_t target_fd() const { return static_cast<uint64_t>(fd_); }
  // atrace's own descriptor of the same file.
  UniqueFd take() const;

 private:
  RemoteSyscall& sys_;
  long fd_;
};

}  // namespace atrace::fastpath
