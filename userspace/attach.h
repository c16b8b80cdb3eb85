// Attaching function probes: an entry uprobe and a uretprobe per probe site,
// each a perf-event link (uprobe PMU) owned by this object, with the site's
// id as BPF cookie. Links are fds: if atrace dies, the kernel removes the
// probes with them, so nothing can be left behind.
//
// Detach order matters for a clean call tree: all entry links go first, so
// no new call starts being traced, then the return links.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "uprobes/probe_site.h"

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
};

class FunctionProbes {
 public:
  FunctionProbes(bpf_program* entry, bpf_program* exit, pid_t pid)
      : entry_prog_(entry), exit_prog_(exit), pid_(pid) {}

  // Attaches entry and return probes; on failure nothing of this site stays
  // attached and the reason is returned (empty on success).
  std::string attach(const uprobes::ProbeSite& site);
  void detach_all();
  size_t attached_functions() const { return entries_.size(); }

  ~FunctionProbes() { detach_all(); }

 private:
  bpf_program* entry_prog_;
  bpf_program* exit_prog_;
  pid_t pid_;
  std::vector<LinkPtr> entries_;
  std::vector<LinkPtr> exits_;
};

}  // namespace atrace
