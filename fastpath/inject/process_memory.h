// Reading and writing another process's memory from outside, without its
// help and without stopping it:
// - write_any goes through /proc/PID/mem, whose writes use FOLL_FORCE: they
//   also reach read-only and executable pages (the code region, patched
//   function entries), copying a file-backed page on write as a debugger's
//   breakpoint does.
// - read / write use process_vm_readv / process_vm_writev: no file
//   descriptor, but only pages the target itself could read or write (the
//   ring region).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <span>

#include "base/unique_fd.h"
#include "fastpath/memory_access.h"

namespace atrace::fastpath {

class ProcessMemory {
 public:
  // Opens /proc/PID/mem (InjectError when the kernel refuses).
  explicit ProcessMemory(pid_t pid);

  pid_t pid() const { return pid_; }

  // All of it or InjectError (ProcessGone when the process ended).
  void read(uint64_t address, std::span<std::byte> out) const;
  void write(uint64_t address, std::span<const std::byte> bytes) const;
  // Any mapped page, whatever its protection (FOLL_FORCE).
  void read_any(uint64_t address, std::span<std::byte> out) const;
  void write_any(uint64_t address, std::span<const std::byte> bytes) const;

 private:
  pid_t pid_;
  UniqueFd mem_;
  mutable VmMemory vm_;  // the one process_vm_readv/writev path (memory_access.h)
};

}  // namespace atrace::fastpath
