#include "base/capabilities.h"

#include <linux/capability.h>
#include <sys/capability.h>

#include <cerrno>
#include <fstream>

namespace atrace {

namespace {

bool in_effective_set(cap_value_t cap) {
  cap_t caps = cap_get_proc();
  if (!caps) return false;
  cap_flag_value_t v = CAP_CLEAR;
  const bool ok = cap_get_flag(caps, cap, CAP_EFFECTIVE, &v) == 0;
  cap_free(caps);
  return ok && v == CAP_SET;
}

// The sysctl's value as the kernel prints it, "?" when it cannot be read.
std::string sysctl(const char* path) {
  std::ifstream in(path);
  std::string v;
  return in >> v ? v : "?";
}

}  // namespace

bool has_capability(int cap) {
  if (in_effective_set(cap)) return true;
  // The kernel's bpf_capable() and perfmon_capable() accept CAP_SYS_ADMIN.
  return (cap == CAP_BPF || cap == CAP_PERFMON) && in_effective_set(CAP_SYS_ADMIN);
}

bool can_trace() { return has_capability(CAP_BPF) && has_capability(CAP_PERFMON); }

std::string tracing_privilege_error(const std::string& command) {
  const bool bpf = has_capability(CAP_BPF), perfmon = has_capability(CAP_PERFMON);
  if (bpf && perfmon) return {};
  // The sysctls that open BPF and perf to unprivileged users do not reach
  // what atrace uses: tracing programs need CAP_BPF at any
  // unprivileged_bpf_disabled, uprobe events CAP_PERFMON at any
  // perf_event_paranoid. Saying so spares the user lowering them for nothing.
  std::string missing, why;
  if (!bpf) {
    missing = "CAP_BPF";
    why = "tracing programs need CAP_BPF whatever kernel.unprivileged_bpf_disabled (now " +
          sysctl("/proc/sys/kernel/unprivileged_bpf_disabled") + ") says";
  }
  if (!perfmon) {
    missing += missing.empty() ? "CAP_PERFMON" : " and CAP_PERFMON";
    why += (why.empty() ? "" : ", ") +
           std::string("uprobes need CAP_PERFMON whatever kernel.perf_event_paranoid (now ") +
           sysctl("/proc/sys/kernel/perf_event_paranoid") + ") says";
  }
  return command + " needs CAP_BPF and CAP_PERFMON (or root): missing " + missing +
         " (no sysctl lifts this: " + why + ")";
}

std::string task_uprobe_privilege_hint(int err) {
  if (err < 0) err = -err;
  if ((err != EACCES && err != EPERM) || has_capability(CAP_SYS_ADMIN)) return {};
  return " (uprobe perf events bound to a process need CAP_SYS_ADMIN besides CAP_BPF and "
         "CAP_PERFMON: docs/privileges.md)";
}

}  // namespace atrace
