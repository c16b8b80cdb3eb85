// Kernel features atrace depends on or profits from, detected once at start
// by probing the running kernel (its BTF, test loads), never from
// its version number. kernel-notes/ explains each one: what it does, since
// when, what atrace does without it; docs/kernels.md says what each Debian
// kernel has.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace atrace {

// The oldest kernel atrace supports: every required feature below exists
// there, and the fallbacks cover the optional ones.
constexpr const char* kMinimumKernel = "5.15";

struct KernelFeatures {
  // Required: without one of these atrace cannot record.
  bool btf = false;           // /sys/kernel/btf/vmlinux, loadable (5.4)
  bool uprobe_pmu = false;    // perf_event_open uprobe PMU (4.17)
  bool ringbuf = false;       // BPF_MAP_TYPE_RINGBUF (5.8)
  bool bpf_cookie = false;    // bpf_get_attach_cookie() in uprobe programs (5.15)
  bool task_storage = false;  // BPF_MAP_TYPE_TASK_STORAGE (5.11)
  bool tp_btf = false;        // btf_trace_* types for tp_btf programs (5.5)
  // Optional: atrace falls back without them (describe() says how).
  bool uprobe_multi = false;        // 6.6+: many uprobes per link
  bool uretprobe_syscall = false;   // 6.11+: cheaper return probes
  bool uprobe_syscall = false;      // 6.18+: optimized uprobes on NOP5
  bool sleepable_uprobe = false;    // 6.0+: uprobe programs that may fault
  bool copy_from_user_str = false;  // 6.12+: kfunc bpf_copy_from_user_str
  // 6.18+: kfunc bpf_task_work_schedule_resume_impl, which the unwind
  // guard's release needs (unwind_guard.h; it says what it does without).
  bool task_work = false;
  // Tracepoint signatures that changed (the programs exist in both forms).
  bool switch_prev_state = false;  // sched_switch(..., prev_state): 5.18+
  bool exit_group_dead = false;    // sched_process_exit(p, group_dead): recent
  std::string release;             // uname -r
  // The features found by loading a program (BPF ring buffer, cookies,
  // task storage, sleepable uprobes) were probed: false without CAP_BPF
  // and CAP_PERFMON, when those loads fail whatever the kernel offers.
  bool loads_probed = true;

  // USDT string arguments may fault their pages in.
  bool faulting_string_copy() const { return sleepable_uprobe && copy_from_user_str; }

  // Empty when recording can proceed; otherwise one line saying what is
  // missing and what to do.
  std::string missing_requirement() const;

  // One entry per feature, for `atrace info --kernel` and `record -v`.
  struct Line {
    std::string name;  // "uprobe_multi links"
    bool required;
    bool present;
    bool known;           // false: could not be probed without the capabilities
    std::string without;  // what atrace does, and what the user loses, without it
  };
  std::vector<Line> describe() const;
  // What this kernel costs a recording, one line per missing optional
  // feature that changes numbers or contents ("feature: consequence"):
  // stored in the trace header, shown by info and the reports.
  std::vector<std::string> limits() const;
};

KernelFeatures detect_kernel_features();

// "Kernel RELEASE:" then one line per feature, "  NAME: yes" or
// "  NAME: no -- what atrace does without it", NAME ending in
// " (required)" for what atrace cannot record without (docs/kernels.md is
// built from these lines); "  NAME: unknown without CAP_BPF and
// CAP_PERFMON (or root) -- ..." for what could not be probed.
// `atrace info --kernel`, `atrace -V` and `record -v` print it.
std::string kernel_features_text(const KernelFeatures& f);
void print_kernel_features(std::FILE* out, const KernelFeatures& f);

// "5.15" <= "6.1.0-27-cloud-amd64": compares the leading major.minor.
bool release_at_least(const std::string& release, const std::string& minimum);

}  // namespace atrace
