#include "record/lanes.h"

#include <atomic>

#include "bpf/atrace.h"

namespace atrace {

namespace {

static_assert(sizeof(atrace_lane_slot) == 32, "a lane slot is half a cache line");
static_assert(sizeof(atrace_lane_ctl) == 128, "producer and consumer on lines of their own");

// The programs free no slot until the consumer index passes it, so a batch
// is handed over straight from the slots; the index moves on every so
// often, not only at the end, so that a long drain frees room as it goes.
constexpr uint64_t kFreeEvery = 1024;

}  // namespace

SlotLanes::SlotLanes(int ctl_fd, int data_fd, int ncpus, uint32_t slots)
    : ctl_(ctl_fd, sizeof(atrace_lane_ctl) * static_cast<size_t>(ncpus), "the lanes' indices"),
      data_(data_fd, sizeof(atrace_lane_slot) * static_cast<size_t>(ncpus) * slots,
            "the lanes' slots"),
      ncpus_(ncpus),
      slots_(slots) {}

size_t SlotLanes::drain(const PerCpuRings::Handler& handler) {
  auto* ctls = static_cast<atrace_lane_ctl*>(ctl_.get());
  auto* all = static_cast<atrace_lane_slot*>(data_.get());
  size_t n = 0;
  for (int cpu = 0; cpu < ncpus_; ++cpu) {
    atrace_lane_ctl& c = ctls[cpu];
    std::atomic_ref<__u64> cons_ref(c.cons);
    const __u64 prod = std::atomic_ref<__u64>(c.prod).load(std::memory_order_acquire);
    __u64 cons = cons_ref.load(std::memory_order_relaxed);
    atrace_lane_slot* lane = all + static_cast<size_t>(cpu) * slots_;
    for (; cons < prod; ++cons) {
      atrace_lane_slot& s = lane[cons & (slots_ - 1)];
      if (std::atomic_ref<__u64>(s.seq).load(std::memory_order_acquire) != cons + 1) break;
      if (s.hdr.kind == ATRACE_REC_GAP) {
        atrace_rec_args gap{};
        gap.hdr = s.hdr;
        gap.hdr.id = 0;
        gap.arg0 = s.hdr.id;  // the count (bpf/lanes.bpf.h, lane_gap)
        if (handler) handler(&gap, sizeof(gap));
      } else if (handler) {
        handler(&s.hdr, sizeof(s.hdr));
      }
      ++n;
      if ((cons + 1) % kFreeEvery == 0) cons_ref.store(cons + 1, std::memory_order_release);
    }
    cons_ref.store(cons, std::memory_order_release);
  }
  return n;
}

}  // namespace atrace
