#include "record/bpf_variants.h"

#include <bpf/libbpf.h>

#include "bpf/atrace.skel.h"
#include "record/features.h"

namespace atrace {

namespace {

// x86-64 numbers of the uprobe machinery's system calls.
constexpr long kNrUretprobe = 335;
constexpr long kNrUprobe = 336;

// `primary` keeps its autoload when `use_primary`, else hands it to `other`.
void pick(bpf_program* primary, bpf_program* other, bool use_primary) {
  const bool wanted = bpf_program__autoload(primary);
  bpf_program__set_autoload(primary, wanted && use_primary);
  bpf_program__set_autoload(other, wanted && !use_primary);
}

}  // namespace

void adapt_to_kernel(atrace_bpf* skel, const KernelFeatures& f) {
  auto& p = skel->progs;
  pick(p.sched_switch, p.sched_switch_nostate, f.switch_prev_state);
  pick(p.thread_exit, p.thread_exit_nogroup, f.exit_group_dead);
  pick(p.usdt_hit_str, p.usdt_hit_str_nofault, f.faulting_string_copy());
  skel->rodata->nr_uretprobe = f.uretprobe_syscall ? kNrUretprobe : -1;
  skel->rodata->nr_uprobe = f.uprobe_syscall ? kNrUprobe : -1;
}

bpf_program* usdt_string_program(atrace_bpf* skel, const KernelFeatures& f) {
  return f.faulting_string_copy() ? skel->progs.usdt_hit_str : skel->progs.usdt_hit_str_nofault;
}

bool thread_exit_attached(const atrace_bpf* skel) {
  return skel->links.thread_exit || skel->links.thread_exit_nogroup;
}

}  // namespace atrace
