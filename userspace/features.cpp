#include "userspace/features.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <string>

namespace atrace {

namespace {

bool exists(const char* path) { return access(path, F_OK) == 0; }

// Syscalls that must not be called to probe them (sys_uretprobe raises
// SIGILL outside its trampoline), so look for their entry points instead.
void scan_kallsyms(KernelFeatures& f) {
  std::ifstream in("/proc/kallsyms");
  std::string addr, type, name;
  while (in >> addr >> type >> name) {
    if (name == "__x64_sys_uretprobe") f.uretprobe_syscall = true;
    else if (name == "__x64_sys_uprobe") f.uprobe_syscall = true;
    else if (name == "bpf_uprobe_multi_link_attach") f.uprobe_multi = true;
    in.ignore(1 << 12, '\n');
  }
}

}  // namespace

KernelFeatures detect_kernel_features() {
  KernelFeatures f;
  f.btf = exists("/sys/kernel/btf/vmlinux");
  f.uprobe_pmu = exists("/sys/bus/event_source/devices/uprobe/type");
  struct utsname u {};
  if (uname(&u) == 0) f.release = u.release;
  scan_kallsyms(f);
  return f;
}

std::string KernelFeatures::missing_requirement() const {
  if (!btf)
    return "kernel " + release +
           " has no BTF (/sys/kernel/btf/vmlinux): atrace needs CONFIG_DEBUG_INFO_BTF=y";
  if (!uprobe_pmu)
    return "kernel " + release +
           " has no uprobe PMU (/sys/bus/event_source/devices/uprobe): atrace needs "
           "CONFIG_UPROBE_EVENTS=y (Linux 4.17 or later)";
  return {};
}

}  // namespace atrace
