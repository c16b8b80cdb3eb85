// Kernel features atrace depends on or profits from, detected once at start.
// kernel-notes/ explains each one: what it does, since when, what atrace
// does without it.
#pragma once

#include <string>

namespace atrace {

struct KernelFeatures {
  bool btf = false;             // /sys/kernel/btf/vmlinux (required)
  bool uprobe_pmu = false;      // perf_event_open uprobe PMU (required)
  bool uretprobe_syscall = false;  // 6.11+: cheaper return probes
  bool uprobe_syscall = false;     // 6.18+: optimized uprobes on NOP5
  bool uprobe_multi = false;       // 6.6+: many uprobes per link
  std::string release;          // uname -r

  // Empty when recording can proceed; otherwise one line saying what is
  // missing and what to do.
  std::string missing_requirement() const;
};

KernelFeatures detect_kernel_features();

}  // namespace atrace
