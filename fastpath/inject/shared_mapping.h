// Memory the target and atrace both map: a memfd created IN the target by a
// remote memfd_create (remote_syscall.h), mapped MAP_SHARED over a range of
// a region atrace mapped there before (the same addresses, which the
// trampolines already use), taken into atrace with pidfd_getfd (Linux 5.6;
// it needs the ptrace access atrace has) and mapped here too; the target's
// descriptor is then closed, so the program sees no new file descriptor.
//
// Why a memfd made in the target rather than in atrace: the target cannot
// receive a descriptor without its help, atrace can take one from it.
// Why shared at all: what the target writes stays readable after the
// target exits (its mapping goes, atrace's stays), and atrace reads it
// with plain loads instead of process_vm_readv.
//
// The target's mapping outlives this object (a killed atrace leaves it, as
// the rest of the region); atrace's is unmapped by the destructor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "fastpath/inject/remote_syscall.h"

namespace atrace::fastpath {

class SharedMapping {
 public:
  // Replaces [address, address + size) of the stopped target (page-aligned,
  // writable, inside a mapping atrace made) by the shared memfd `name`
  // (/proc/PID/maps shows /memfd:NAME). The range's old content is lost.
  // InjectError when a step fails (the target's descriptor is closed then
  // too). memfd_create reads `name` from the target's memory: it is written
  // at `scratch` (writable, the target's own, name.size() + 1 bytes), by
  // default the range itself; a range still shared with another process
  // (a fork child's inherited lanes) needs a private scratch elsewhere.
  static SharedMapping replace(RemoteSyscall& sys, uint64_t address, uint64_t size,
                               const std::string& name, uint64_t scratch = 0);
  ~SharedMapping();
  SharedMapping(SharedMapping&& o) noexcept;
  SharedMapping& operator=(SharedMapping&&) = delete;
  SharedMapping(const SharedMapping&) = delete;
  SharedMapping& operator=(const SharedMapping&) = delete;

  // atrace's view of the range: local() + i is the target's address + i.
  uint8_t* local() const { return local_; }
  uint64_t size() const { return size_; }
  uint64_t target_address() const { return address_; }

 private:
  SharedMapping(uint8_t* local, uint64_t size, uint64_t address)
      : local_(local), size_(size), address_(address) {}
  uint8_t* local_;
  uint64_t size_;
  uint64_t address_;
};

}  // namespace atrace::fastpath
