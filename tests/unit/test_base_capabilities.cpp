// base/capabilities.h: what counts as able to trace, and the one line that
// names what is missing. Each case drops capabilities in a forked child
// (root is needed to have them to drop) and reports back through its exit
// status, so this process keeps its own.
#include <gtest/gtest.h>
#include <linux/capability.h>
#include <sys/capability.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <functional>
#include <string>

#include "base/capabilities.h"

namespace atrace {
namespace {

// Runs `check` in a child whose effective set is exactly `caps` ("" for
// none); true when it returned true.
bool in_child_with(const char* caps, const std::function<bool()>& check) {
  pid_t child = fork();
  if (child == 0) {
    cap_t c = cap_from_text(*caps ? caps : "all-eip");
    if (!c || cap_set_proc(c) != 0) _exit(2);
    _exit(check() ? 0 : 1);
  }
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child) return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(BaseCapabilities, NamesWhatIsMissing) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to have capabilities to drop";
  EXPECT_TRUE(can_trace());
  EXPECT_EQ(tracing_privilege_error("record"), "");
  EXPECT_TRUE(in_child_with("cap_bpf,cap_perfmon=ep", [] {
    return can_trace() && tracing_privilege_error("record").empty();
  }));
  // CAP_SYS_ADMIN counts for both, as in the kernel.
  EXPECT_TRUE(in_child_with("cap_sys_admin=ep", [] { return can_trace(); }));
  EXPECT_TRUE(in_child_with("cap_bpf=ep", [] {
    const std::string e = tracing_privilege_error("record");
    return !can_trace() &&
           contains(e, "record needs CAP_BPF and CAP_PERFMON (or root): missing CAP_PERFMON (") &&
           !contains(e, "missing CAP_BPF") && contains(e, "kernel.perf_event_paranoid (now ") &&
           !contains(e, "unprivileged_bpf_disabled");
  }));
  EXPECT_TRUE(in_child_with("cap_perfmon=ep", [] {
    const std::string e = tracing_privilege_error("record");
    return contains(e, "missing CAP_BPF (") && contains(e, "unprivileged_bpf_disabled (now ");
  }));
  EXPECT_TRUE(in_child_with("", [] {
    return contains(tracing_privilege_error("record"), "missing CAP_BPF and CAP_PERFMON (");
  }));
}

TEST(BaseCapabilities, TaskUprobeHintOnlyForAPermissionWithoutSysAdmin) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to have capabilities to drop";
  EXPECT_EQ(task_uprobe_privilege_hint(EACCES), "");  // root: not the cause
  EXPECT_TRUE(in_child_with("cap_bpf,cap_perfmon=ep", [] {
    return contains(task_uprobe_privilege_hint(-EACCES), "CAP_SYS_ADMIN") &&
           contains(task_uprobe_privilege_hint(EPERM), "CAP_SYS_ADMIN") &&
           task_uprobe_privilege_hint(ENOENT).empty();
  }));
}

}  // namespace
}  // namespace atrace
