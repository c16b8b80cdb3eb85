// Attaching function probes: an entry uprobe and a uretprobe per probe site,
// the site's id travelling as the BPF cookie, limited to the target process.
//
// Two ways, chosen by kernel feature (record/features.h):
//  - uprobe_multi links (6.6+): one entry link and one return link per
//    group of up to kGroupFunctions functions of a module; attach is one
//    syscall per link and detach one RCU grace period per link, not per
//    probe;
//  - perf-event links (uprobe PMU): one per probe, the fallback.
// Both are fds owned here: if atrace dies, the kernel removes the probes
// with them, so nothing can be left behind.
//
// Return probes are attached before entry probes, so that no call whose
// entry is recorded misses its return probe. They are detached before the
// entry probes (detach_all), with the programs' `stopping` flag set first:
// a return link that outlived its entry link would keep taking over the
// return of new calls whose entry program no longer runs, i.e. record
// exits without entries (bpf/atrace.bpf.c, stop_gate).
//
// Probes are kept in link groups (up to kGroupFunctions of a module's
// functions in one pair of multi links, or one site's perf links). The
// relevance filters take a function out by rebuilding its group without it
// (rebuild_without): new links with a new generation in their cookies
// (id | gen << 32), then the caller switches fn_state's generation and
// closes the old links, which it gets back as a RetiredLinks. While both
// are attached, the first program of a hit records it (bpf/atrace.bpf.c,
// struct hit_mark).
//
// Why groups: a rebuild costs what attaching and detaching its probes
// costs, per probe (about 7 us to attach and 5 us to detach a probe of a
// multi link here: docs/BENCHMARKS.md), so a module's 2,000 functions in
// one link made each detach cost tens of ms; in groups of 64 a detach
// rebuilds 64. More links cost nothing per hit (a hit runs the programs of
// the links holding that probe only) and little at the end (closed
// together, their grace periods are shared).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/unique_fd.h"
#include "record/probe_links.h"
#include "uprobes/probe_site.h"

struct bpf_link;
struct bpf_program;

namespace atrace {

// The links a rebuild replaced: close `entry`, then `exit` once the calls
// in flight of the removed functions have returned.
struct RetiredLinks {
  OwnedLink entry;
  OwnedLink exit;
};

struct AttachFailure {
  const uprobes::ProbeSite* site;
  std::string reason;
  int error;  // errno
};

class FunctionProbes {
 public:
  static constexpr size_t kGroupFunctions = 64;
  // `multi`: the programs were loaded for uprobe_multi links. `pid`: as
  // record/probe_links.h says (kEveryProcess: the programs filter).
  FunctionProbes(bpf_program* entry, bpf_program* exit, pid_t pid, bool multi)
      : entry_prog_(entry), exit_prog_(exit), pid_(pid), multi_(multi) {}
  ~FunctionProbes() { detach_all(); }
  // The programs of the sites with_values (--args/--retval): such sites
  // are grouped apart, so a module has one pair of links for them.
  void set_value_programs(bpf_program* entry, bpf_program* exit) {
    values_entry_prog_ = entry;
    values_exit_prog_ = exit;
  }
  // The entry program of the sites with_stack (--stack), grouped apart too.
  void set_stack_program(bpf_program* entry) { stack_entry_prog_ = entry; }
  FunctionProbes(const FunctionProbes&) = delete;
  FunctionProbes& operator=(const FunctionProbes&) = delete;

  // Attaches every site it can; returns the ones it could not (pointing
  // into `sites`). The groups keep copies of the sites they hold.
  std::vector<AttachFailure> attach(const std::vector<uprobes::ProbeSite>& sites);
  void detach_all();

  // The group holding `id`, -1 if none (never attached, or rebuilt away).
  int group_of(uint32_t id) const;
  // Re-attaches group `g` without the sites for which `drop` is true, with
  // the next generation; `switch_gen(id, gen)` is called for each kept site
  // once its new links are in place. Returns the old links. On failure to
  // attach the new links, nothing changes and the error is returned in
  // `error` (the old links go on; the programs' off flag still silences the
  // dropped functions).
  // Different groups may be rebuilt at once, from different threads.
  RetiredLinks rebuild_without(int g, const std::function<bool(uint32_t)>& drop,
                               const std::function<void(uint32_t, uint32_t)>& switch_gen,
                               std::string& error);

 private:
  struct Group {
    std::vector<uprobes::ProbeSite> sites;
    uint32_t gen = 0;
    OwnedLink entry, exit;
  };
  std::string attach_group(Group& g, int& error);
  bpf_program* program(const Group& g, bool ret) const;
  void attach_multi_split(std::vector<const uprobes::ProbeSite*> sites,
                          std::vector<AttachFailure>& failures);

  bpf_program* entry_prog_;
  bpf_program* exit_prog_;
  bpf_program* values_entry_prog_ = nullptr;
  bpf_program* values_exit_prog_ = nullptr;
  bpf_program* stack_entry_prog_ = nullptr;
  pid_t pid_;
  bool multi_;
  std::vector<Group> groups_;
  // The newest generation handed out, any group (groups are rebuilt on
  // threads of their own at once: record/detacher.cpp).
  std::atomic<uint32_t> last_gen_{0};
};

}  // namespace atrace
