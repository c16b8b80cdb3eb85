#include "record/announce.h"

#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <fstream>
#include <string>

#include "base/diagnostics.h"
#include "base/plural.h"
#include "record/kernel_groups.h"

namespace atrace {

// One line saying what a probe hit will cost: the path of each entry probe
// is the main factor (kernel-notes/emulated-vs-single-step.md).
void announce_probes(const std::vector<formats::ProbeInfo>& table, uint64_t attach_ns, bool multi,
                     unsigned kernel_groups) {
  size_t n[6] = {}, functions = 0, moved = 0;
  for (const auto& p : table) {
    ++n[static_cast<size_t>(p.path_kind) % 6];
    functions += p.kind == formats::ProbeKind::Function;
    moved += p.entry_delta > 0;
  }
  std::string paths;
  auto add = [&](formats::ProbePath p, const char* what) {
    size_t k = n[static_cast<size_t>(p)];
    if (k) paths += (paths.empty() ? "" : ", ") + std::to_string(k) + " " + what;
  };
  add(formats::ProbePath::Patched, "patched (fast path, no trap)");
  add(formats::ProbePath::Nop5, "nop5 (optimized)");
  add(formats::ProbePath::Emulated, "emulated");
  add(formats::ProbePath::SingleStep, "single-stepped (slowest)");
  add(formats::ProbePath::Unknown, "unknown");
  if (moved)  // uprobes/placement.h; `atrace list` and `info` show each
    paths += " (" + std::to_string(moved) + " past the first instruction, where it is cheaper)";
  // What the probes are, how each will be run, and what attaching took
  // (bench/attach_time.sh reads the last figure).
  std::string what = base::plural(functions, "function");
  if (functions < table.size())
    what += " and " + base::plural(table.size() - functions, "USDT probe");
  if (!functions) what = base::plural(table.size(), "USDT probe");
  // The kind of link only where the kernel probes something: a patched
  // function has none.
  const bool kernel_probes = n[static_cast<size_t>(formats::ProbePath::Patched)] < table.size();
  base::progress("probing %s: %s%s; attached in %.1f ms", what.c_str(), paths.c_str(),
                 !kernel_probes ? ""
                 : multi        ? "; uprobe_multi links"
                                : "; perf-event links",
                 static_cast<double>(attach_ns) / 1e6);
  // What the kernel groups cost the traced calls (kernel_groups.h).
  const unsigned g = kernel_groups;
  if (g & (kKernelSyscalls | kKernelNet))
    base::progress(
        "kernel events: %s; the system call tracepoints (syscalls, net) add about 0.5 us to "
        "each traced call and 0.3 us to every system call of the machine",
        kernel_groups_string(g).c_str());
  else if (g)
    base::progress(
        "kernel events: %s (no cost per traced call); system calls are "
        "not recorded: --kernel=+syscalls adds them (about +0.5 us a traced call)",
        kernel_groups_string(g).c_str());
}

namespace {

std::string read_link(const std::string& path) {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink(path.c_str(), buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

}  // namespace

std::string describe_process(pid_t pid) {
  const std::string proc = "/proc/" + std::to_string(pid);
  std::string comm;
  std::getline(std::ifstream(proc + "/comm"), comm);
  std::string out = std::to_string(pid) + " (" + (comm.empty() ? "?" : comm);
  // Its mount namespace and root, when not atrace's (uprobes/process_root.h
  // reads its files through /proc/PID/root then).
  const std::string ns = read_link(proc + "/ns/mnt"), own_ns = read_link("/proc/self/ns/mnt");
  const std::string root = read_link(proc + "/root");
  if (!ns.empty() && ns != own_ns) out += "; mount namespace " + ns;
  if (!root.empty() && root != "/") out += "; root " + root;
  return out + ")";
}

void announce_targets(const std::vector<pid_t>& pids, const std::string& cgroup) {
  std::string list;
  for (pid_t pid : pids) list += (list.empty() ? "" : ", ") + describe_process(pid);
  // One process of atrace's own file system: the command line said it all.
  if (pids.size() == 1 && cgroup.empty() && list.find(';') == std::string::npos) return;
  if (!cgroup.empty())
    base::progress("tracing cgroup %s and the processes started in it: %s now: %s", cgroup.c_str(),
                   base::plural(pids.size(), "process", "processes").c_str(), list.c_str());
  else
    base::progress("tracing %s: %s", base::plural(pids.size(), "process", "processes").c_str(),
                   list.c_str());
}

}  // namespace atrace
