#include "record/announce.h"

#include <cstdio>
#include <string>

#include "base/plural.h"
#include "record/kernel_groups.h"

namespace atrace {

// One line saying what a probe hit will cost: the path of each entry probe
// is the main factor (kernel-notes/emulated-vs-single-step.md).
void announce_probes(const std::vector<formats::ProbeInfo>& table, uint64_t attach_ns, bool multi,
                     unsigned kernel_groups) {
  size_t n[5] = {}, functions = 0, moved = 0;
  for (const auto& p : table) {
    ++n[static_cast<size_t>(p.path_kind) % 5];
    functions += p.kind == formats::ProbeKind::Function;
    moved += p.entry_delta > 0;
  }
  std::string paths;
  auto add = [&](formats::ProbePath p, const char* what) {
    size_t k = n[static_cast<size_t>(p)];
    if (k) paths += (paths.empty() ? "" : ", ") + std::to_string(k) + " " + what;
  };
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
  std::fprintf(stderr, "atrace: probing %s: %s; %s; attached in %.1f ms\n", what.c_str(),
               paths.c_str(), multi ? "uprobe_multi links" : "perf-event links",
               static_cast<double>(attach_ns) / 1e6);
  // What the kernel groups cost the traced calls (kernel_groups.h).
  const unsigned g = kernel_groups;
  if (g & kKernelSyscalls)
    std::fprintf(stderr,
                 "atrace: kernel events: %s; recording system calls adds about 0.5 us to each "
                 "traced call and 0.3 us to every system call of the machine\n",
                 kernel_groups_string(g).c_str());
  else if (g)
    std::fprintf(stderr,
                 "atrace: kernel events: %s (no cost per traced call); system calls are "
                 "not recorded: --kernel=+syscalls adds them (about +0.5 us a traced call)\n",
                 kernel_groups_string(g).c_str());
}

}  // namespace atrace
