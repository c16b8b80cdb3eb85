// Attaching function probes: an entry uprobe and a uretprobe per probe site,
// the site's id travelling as the BPF cookie, limited to the target process.
//
// Two ways, chosen by kernel feature (userspace/features.h):
//  - uprobe_multi links (6.6+): one entry link and one return link per
//    module; attach is one syscall per link and detach one RCU grace period
//    per link, not per probe;
//  - perf-event links (uprobe PMU): one per probe, the fallback.
// Both are fds owned here: if atrace dies, the kernel removes the probes
// with them, so nothing can be left behind.
//
// Return probes are attached before entry probes and detached after them:
// a call racing with either yields at worst an exit without an entry (which
// analyses ignore), never an entry whose exit was lost.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "uprobes/probe_site.h"
#include "userspace/unique_fd.h"

struct bpf_link;
struct bpf_program;

namespace atrace {

struct LinkDeleter {
  void operator()(bpf_link* l) const;
};
using LinkPtr = std::unique_ptr<bpf_link, LinkDeleter>;

struct AttachFailure {
  const uprobes::ProbeSite* site;
  std::string reason;
  int error;  // errno
};

class FunctionProbes {
 public:
  // `multi`: the programs were loaded for uprobe_multi links. pid -1: every
  // process that maps the module (the programs filter).
  FunctionProbes(bpf_program* entry, bpf_program* exit, pid_t pid, bool multi)
      : entry_prog_(entry), exit_prog_(exit), pid_(pid), multi_(multi) {}
  ~FunctionProbes() { detach_all(); }
  FunctionProbes(const FunctionProbes&) = delete;
  FunctionProbes& operator=(const FunctionProbes&) = delete;

  // Attaches every site it can; returns the ones it could not.
  std::vector<AttachFailure> attach(const std::vector<uprobes::ProbeSite>& sites);
  void detach_all();

 private:
  std::string attach_perf(const uprobes::ProbeSite& site, int& error);
  std::string attach_multi(const std::vector<const uprobes::ProbeSite*>& group, int& error);
  void attach_multi_split(const std::vector<const uprobes::ProbeSite*>& group,
                          std::vector<AttachFailure>& failures);

  bpf_program* entry_prog_;
  bpf_program* exit_prog_;
  pid_t pid_;
  bool multi_;
  // perf-event links
  std::vector<LinkPtr> entries_;
  std::vector<LinkPtr> exits_;
  // uprobe_multi link fds
  std::vector<UniqueFd> multi_entries_;
  std::vector<UniqueFd> multi_exits_;
};

}  // namespace atrace
