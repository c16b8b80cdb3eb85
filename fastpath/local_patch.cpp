// The fast path in atrace's own process (local_patch.h).
#include "fastpath/local_patch.h"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <system_error>

namespace atrace::fastpath {

namespace {

constexpr uint64_t kPage = 4096;
constexpr uint64_t kStep = 16ull << 20;
constexpr int64_t kReach = (1ll << 31) - (64ll << 20);  // rel32, with room for the region

// This process's own code and mappings are addressed by number here.
template <typename T = void>
T* at_address(uint64_t a) {
  return reinterpret_cast<T*>(a);  // NOLINT(performance-no-int-to-ptr)
}

std::system_error sys_error(const char* what) {
  return std::system_error(errno, std::generic_category(), what);
}

// Makes [at, at+len) writable (and executable) while `f` runs.
template <typename F>
void with_writable_code(uint64_t at, size_t len, F f) {
  const uint64_t first = at & ~(kPage - 1);
  const size_t span = ((at + len + kPage - 1) & ~(kPage - 1)) - first;
  void* p = at_address(first);
  if (mprotect(p, span, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) throw sys_error("mprotect");
  f();
  if (mprotect(p, span, PROT_READ | PROT_EXEC) != 0) throw sys_error("mprotect");
}

}  // namespace

LocalCodeRegion::LocalCodeRegion(const void* near, size_t size)
    : size_((size + kPage - 1) & ~(kPage - 1)) {
  const uint64_t centre = reinterpret_cast<uint64_t>(near) & ~(kStep - 1);
  // Below the module first (the heap and the libraries' gaps are above a
  // PIE executable), then above it.
  for (int side : {-1, 1}) {
    for (uint64_t k = 1; static_cast<int64_t>(k * kStep) < kReach; ++k) {
      const uint64_t hint = side < 0 ? centre - k * kStep : centre + k * kStep;
      void* p = mmap(at_address(hint), size_, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
      if (p == MAP_FAILED) continue;
      data_ = static_cast<uint8_t*>(p);
      return;
    }
  }
  throw std::runtime_error("no free address within rel32 reach for a fast-path code region");
}

LocalCodeRegion::~LocalCodeRegion() {
  if (data_) munmap(data_, size_);
}

void LocalCodeRegion::seal() {
  if (mprotect(data_, size_, PROT_READ | PROT_EXEC) != 0) throw sys_error("mprotect");
}

LocalRing::LocalRing(const RingGeometry& geometry) : layout_(make_layout(geometry)) {
  void* p = mmap(nullptr, layout_.total_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                 -1, 0);
  if (p == MAP_FAILED) throw sys_error("mmap");
  base_ = static_cast<uint8_t*>(p);
  std::memcpy(base_, &layout_, sizeof layout_);
}

LocalRing::~LocalRing() {
  if (base_) munmap(base_, layout_.total_bytes);
}

LaneHeader& LocalRing::lane(uint32_t i) {
  return reinterpret_cast<LaneHeader*>(base_ + layout_.lanes_offset)[i];
}

FastRecord* LocalRing::records(uint32_t lane) {
  return reinterpret_cast<FastRecord*>(base_ + layout_.records_offset) +
         uint64_t{lane} * layout_.lane_slots;
}

void LocalRing::drain(std::vector<FastRecord>& out) {
  for (uint32_t l = 0; l < layout_.lane_count; ++l) {
    LaneHeader& h = lane(l);
    FastRecord* recs = records(l);
    uint64_t tail = h.tail;
    const uint64_t head = std::atomic_ref<uint64_t>(h.head).load(std::memory_order_acquire);
    for (; tail < head; ++tail) {
      FastRecord& r = recs[tail & (layout_.lane_slots - 1)];
      // A slot reserved but not written yet ends this lane's batch.
      if (std::atomic_ref<uint64_t>(r.seq).load(std::memory_order_acquire) != tail + 1) break;
      out.push_back(r);
    }
    std::atomic_ref<uint64_t>(h.tail).store(tail, std::memory_order_release);
  }
}

uint64_t LocalRing::lost() const {
  uint64_t n = 0;
  const auto* lanes = reinterpret_cast<const LaneHeader*>(base_ + layout_.lanes_offset);
  for (uint32_t l = 0; l < layout_.lane_count; ++l) n += lanes[l].lost;
  return n;
}

LocalPatch::LocalPatch(uint64_t function, const std::array<uint8_t, kJumpBytes>& jump)
    : function_(function) {
  auto* code = at_address<uint8_t>(function);
  std::memcpy(saved_.data(), code, saved_.size());
  with_writable_code(function, jump.size(), [&] { std::memcpy(code, jump.data(), jump.size()); });
}

LocalPatch::~LocalPatch() {
  auto* code = at_address<uint8_t>(function_);
  try {
    with_writable_code(function_, saved_.size(),
                       [&] { std::memcpy(code, saved_.data(), saved_.size()); });
  } catch (...) {
  }
}

}  // namespace atrace::fastpath
