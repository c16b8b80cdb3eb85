// Attaching USDT probes (record --usdt). Each site's argument locations
// become a spec bpf_usdt_arg() reads, and its uprobe carries the semaphore
// as its reference counter, so the kernel turns a probe's semaphore on in
// the traced process while the link lives and off when it goes (a
// program's `if (semaphore)` guard sees atrace). Two ways, as for
// functions:
//   - uprobe_multi links (Linux 6.6+): one link per probe holding all its
//     sites, specs written by atrace (record/usdt_specs.h); needs no more
//     than CAP_BPF and CAP_PERFMON;
//   - libbpf's bpf_program__attach_usdt(): one perf-event link per site,
//     for older kernels and --attach=perf.
// The links are owned here (RAII): closing them detaches.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "record/attach.h"
#include "record/usdt_specs.h"
#include "uprobes/usdt_select.h"

struct bpf_program;

namespace atrace {

class UsdtProbes {
 public:
  // pid -1: every process (follow-forks; the program filters).
  // `prog` records events and intervals, `str_prog` events with string
  // arguments. `specs` set: uprobe_multi links (the programs were loaded
  // for them), else libbpf's perf-event links.
  UsdtProbes(bpf_program* prog, bpf_program* str_prog, pid_t pid, UsdtSpecTable* specs)
      : prog_(prog), str_prog_(str_prog), pid_(pid), specs_(specs) {}
  // Attaches every target; returns one message per target that failed
  // ("app:req in demo: <reason>"). Targets that attached are `attached()`.
  std::vector<std::string> attach(const std::vector<uprobes::UsdtTarget>& targets);
  const std::vector<uint32_t>& attached() const { return attached_; }
  // Last attached first: an interval's begin goes before its end.
  void detach_all() {
    while (!links_.empty()) links_.pop_back();
  }

 private:
  bool attach_one(bpf_program* prog, const uprobes::UsdtTarget& t, const std::string& name,
                  const std::vector<uprobes::UsdtProbe>& sites, uint64_t cookie,
                  std::string* error);
  bool attach_perf(bpf_program* prog, const uprobes::UsdtTarget& t, const std::string& name,
                   uint64_t cookie, std::string* error);
  bool attach_multi(bpf_program* prog, const uprobes::UsdtTarget& t,
                    const std::vector<uprobes::UsdtProbe>& sites, uint64_t cookie,
                    std::string* error);

  bpf_program* prog_;
  bpf_program* str_prog_;
  pid_t pid_;
  UsdtSpecTable* specs_;
  std::vector<OwnedLink> links_;
  std::vector<uint32_t> attached_;
};

// libbpf's cookie for a target's probe (bpf/atrace.h, "USDT probes").
uint64_t usdt_cookie(uint32_t id, unsigned role, uint32_t string_mask);

}  // namespace atrace
