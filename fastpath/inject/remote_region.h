// Memory atrace puts into a running process: a PRIVATE ANONYMOUS mapping
// made by a remote mmap (remote_syscall.h), so that a fork child gets its
// own copy (its shadow stacks). The ring's lanes are then replaced by a
// memfd shared with atrace (shared_mapping.h; ring_layout.h says how a
// child is kept out of them). atrace reads and writes the rest from
// outside (process_memory.h): writable regions with
// process_vm_readv/writev, the others (the code region, PROT_READ |
// PROT_EXEC) through /proc/PID/mem.
//
// --fast-path=hot's code regions are a memfd mapped MAP_PRIVATE instead
// (map_file_near): a file the kernel can put uprobes on (the unwind guard's,
// on the unwinders' trampolines), whose bytes atrace writes through the file
// (write()), so that the process's pages stay the page cache's, the bytes
// the kernel single-steps out of line (docs/fast-path.md, "Hot functions").
//
// The mapping outlives this object: it is unmapped only by unmap(), which
// the caller calls once nothing points into it any more (no patched entry,
// no replaced return address, no thread inside it). A killed atrace leaves
// it mapped, which is what keeps the trampolines working.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "base/unique_fd.h"
#include "fastpath/inject/process_memory.h"
#include "fastpath/inject/region_placement.h"
#include "fastpath/inject/remote_syscall.h"

namespace atrace::fastpath {

class RemoteRegion {
 public:
  // `size` bytes (rounded up to pages) with `prot` (PROT_*) within rel32
  // reach of `module` (region_placement.h), trying each free gap in turn
  // with MAP_FIXED_NOREPLACE. `name` labels it in /proc/PID/maps as
  // [anon:NAME] where the kernel supports it. InjectError when no gap fits.
  static RemoteRegion map_near(RemoteSyscall& sys, AddressRange module, uint64_t size, int prot,
                               const std::string& name);
  // The same, mapped from a memfd made in the process (remote_memfd.h;
  // its name written at `scratch` first), MAP_PRIVATE: a fork child gets its
  // own copy. write() then writes the file, never the process's copy.
  static RemoteRegion map_file_near(RemoteSyscall& sys, AddressRange module, uint64_t size,
                                    int prot, const std::string& name, uint64_t scratch);
  // Anywhere the kernel chooses.
  static RemoteRegion map_anywhere(RemoteSyscall& sys, uint64_t size, int prot,
                                   const std::string& name);

  uint64_t address() const { return address_; }
  uint64_t size() const { return size_; }
  int prot() const { return prot_; }
  AddressRange range() const { return {address_, address_ + size_}; }
  // atrace's descriptor of the region's memfd (map_file_near), -1 for an
  // anonymous region.
  int file() const { return file_ ? file_->get() : -1; }

  // From atrace, while the process runs or not; offsets checked. A memfd
  // region's bytes are written into the file: they reach every page of
  // the process nothing wrote privately (the kernel's breakpoint does: the
  // caller writes no page once a probe is on it).
  void write(const ProcessMemory& memory, uint64_t offset, std::span<const std::byte> bytes) const;
  void read(const ProcessMemory& memory, uint64_t offset, std::span<std::byte> out) const;

  // madvise(2) on [offset, offset + length) of the region (page-aligned),
  // e.g. MADV_WIPEONFORK for the ring's lanes and records.
  void advise(RemoteSyscall& sys, uint64_t offset, uint64_t length, int advice) const;

  // munmap in the process; the caller has made sure nothing uses it.
  void unmap(RemoteSyscall& sys);
  bool mapped() const { return size_ != 0; }

 private:
  RemoteRegion(uint64_t address, uint64_t size, int prot)
      : address_(address), size_(size), prot_(prot) {}
  // The first free gap near `module` that takes the mapping (fd -1:
  // anonymous).
  static RemoteRegion place_near(RemoteSyscall& sys, AddressRange module, uint64_t size, int prot,
                                 int flags, uint64_t fd);
  void check(uint64_t offset, size_t length) const;
  void name_it(RemoteSyscall& sys, const std::string& name) const;

  uint64_t address_;
  uint64_t size_;
  int prot_;
  std::shared_ptr<const UniqueFd> file_;  // copies of a region share it
};

// The process's /proc/PID/maps, parsed.
std::vector<MapsEntry> read_maps(pid_t pid);

}  // namespace atrace::fastpath
