// How atrace reads and writes the fast path's ring from outside the target
// (fastpath/ring_reader.h): the ring is a private anonymous mapping of the
// target, so atrace reaches it with process_vm_readv/writev, batching every
// range of one drain into one system call. Tests use the same interface on
// memory of their own.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <span>

namespace atrace::fastpath {

// One range of a batch: `len` bytes at `addr` in the target, from or to
// `local`.
struct MemoryPiece {
  uint64_t addr = 0;
  void* local = nullptr;
  size_t len = 0;
};

class MemoryAccess {
 public:
  virtual ~MemoryAccess() = default;
  // All pieces, or false with errno set (ESRCH: the target is gone; EFAULT:
  // a range is not mapped). A partial transfer is a failure.
  virtual bool read(std::span<const MemoryPiece> pieces) = 0;
  virtual bool write(std::span<const MemoryPiece> pieces) = 0;

  bool read(uint64_t addr, void* buf, size_t len) {
    MemoryPiece p{addr, buf, len};
    return read(std::span<const MemoryPiece>(&p, 1));
  }
  bool write(uint64_t addr, const void* buf, size_t len) {
    MemoryPiece p{addr, const_cast<void*>(buf), len};
    return write(std::span<const MemoryPiece>(&p, 1));
  }
};

// Another process's memory, by pid: one process_vm_readv/writev per batch
// (split only past IOV_MAX pieces). Not fastpath/inject/process_memory.h,
// which also writes read-only pages through /proc/PID/mem and throws: this
// one batches the ring's ranges and reports failure without throwing.
class VmMemory final : public MemoryAccess {
 public:
  explicit VmMemory(pid_t pid) : pid_(pid) {}
  bool read(std::span<const MemoryPiece> pieces) override;
  bool write(std::span<const MemoryPiece> pieces) override;
  using MemoryAccess::read;
  using MemoryAccess::write;
  // System calls made so far (the batching is part of the contract: tests
  // check one read per drain, not one per record).
  uint64_t calls() const { return calls_; }

 private:
  bool transfer(std::span<const MemoryPiece> pieces, bool write);
  pid_t pid_;
  uint64_t calls_ = 0;
};

// This process's memory: addresses are pointers (unit tests, and a ring
// mapped into atrace itself).
class LocalMemory final : public MemoryAccess {
 public:
  bool read(std::span<const MemoryPiece> pieces) override;
  bool write(std::span<const MemoryPiece> pieces) override;
  using MemoryAccess::read;
  using MemoryAccess::write;
  uint64_t calls() const { return calls_; }

 private:
  uint64_t calls_ = 0;
};

}  // namespace atrace::fastpath
