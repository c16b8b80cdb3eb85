// The one place that asks which privileges atrace holds. Tracing needs no
// root, only capabilities (Linux 5.8+): CAP_BPF to load the programs and
// create their maps, CAP_PERFMON for the tracing program types and the
// uprobe events they attach to. CAP_SYS_ADMIN (root's) implies both.
// docs/privileges.md says what each command needs and why.
#pragma once

#include <string>

namespace atrace {

// Whether capability `cap` (CAP_* from <linux/capability.h>) is in this
// process's effective set; CAP_SYS_ADMIN counts for CAP_BPF and
// CAP_PERFMON, as the kernel counts it.
bool has_capability(int cap);

// True when this process may load tracing programs and open uprobes.
bool can_trace();

// "" when can_trace(); otherwise the one-line reason `command` cannot run,
// naming the missing capabilities and why no sysctl helps, e.g. "record
// needs CAP_BPF and CAP_PERFMON (or root): missing CAP_PERFMON (...)".
std::string tracing_privilege_error(const std::string& command);

// What to add to a "permission denied" from a uprobe perf event bound to
// one process (USDT probes, `--attach=perf`, the unwinder's probes there):
// with CAP_BPF and CAP_PERFMON but not CAP_SYS_ADMIN the kernel refuses
// those (measured on 6.18; uprobe_multi links, the default since 6.6,
// need no more). "" when CAP_SYS_ADMIN is there or `err` is another error.
std::string task_uprobe_privilege_hint(int err);

}  // namespace atrace
