// The fast path inside atrace's own process, for the trampolines' tests and
// benchmarks: the same generated code as in a target (trampoline.h), mapped
// near this process's own functions, with their entries patched by
// mprotect + memcpy instead of ptrace. Not used to trace other processes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "fastpath/relocate.h"
#include "fastpath/ring_layout.h"

namespace atrace::fastpath {

// An anonymous mapping of `size` bytes within rel32 reach of `near`,
// read-write until seal() makes it read-execute. Throws std::runtime_error
// when no such place is free.
class LocalCodeRegion {
 public:
  LocalCodeRegion(const void* near, size_t size);
  ~LocalCodeRegion();
  LocalCodeRegion(const LocalCodeRegion&) = delete;
  LocalCodeRegion& operator=(const LocalCodeRegion&) = delete;

  uint8_t* data() { return data_; }
  uint64_t address() const { return reinterpret_cast<uint64_t>(data_); }
  size_t size() const { return size_; }
  void seal();

 private:
  uint8_t* data_ = nullptr;
  size_t size_;
};

// A ring of the given geometry in an anonymous mapping, its header written.
class LocalRing {
 public:
  explicit LocalRing(const RingGeometry& geometry);
  ~LocalRing();
  LocalRing(const LocalRing&) = delete;
  LocalRing& operator=(const LocalRing&) = delete;

  const RingHeader& layout() const { return layout_; }
  uint64_t address() const { return reinterpret_cast<uint64_t>(base_); }
  LaneHeader& lane(uint32_t i);
  FastRecord* records(uint32_t lane);
  // Appends the committed records of every lane to `out` (lane by lane, in
  // slot order) and frees their slots, as atrace's reader would.
  void drain(std::vector<FastRecord>& out);
  uint64_t lost() const;  // sum over the lanes

 private:
  RingHeader layout_;
  uint8_t* base_ = nullptr;
};

// Writes `jump` over the first bytes of the function at `function` (made
// writable for the moment) and puts the original bytes back on destruction.
class LocalPatch {
 public:
  LocalPatch(uint64_t function, const std::array<uint8_t, kJumpBytes>& jump);
  ~LocalPatch();
  LocalPatch(const LocalPatch&) = delete;
  LocalPatch& operator=(const LocalPatch&) = delete;

 private:
  uint64_t function_;
  std::array<uint8_t, kJumpBytes> saved_{};
};

}  // namespace atrace::fastpath
