// The one way a BPF program is attached to code in a file: a set of file
// offsets of one module, on uprobe_multi links where the kernel has them
// (one link for all the offsets), on perf-event links otherwise (one per
// offset), limited to one process or to every process that maps the file,
// with one convention for which (record/attach.h's function probes, the
// USDT probes, the module hooks and the unwind guard all come here).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/unique_fd.h"

struct bpf_link;
struct bpf_program;

namespace atrace {

struct LinkDeleter {
  void operator()(bpf_link* l) const;
};
using LinkPtr = std::unique_ptr<bpf_link, LinkDeleter>;

// One kernel link, whichever kind: closing it detaches its probes (and
// waits for a grace period, so callers close links off the hot path).
struct OwnedLink {
  UniqueFd fd;   // uprobe_multi link
  LinkPtr link;  // perf-event link
  explicit operator bool() const { return fd.get() >= 0 || link != nullptr; }
  void close() {
    fd.reset();
    link.reset();
  }
};

// Which processes a probe fires in: a pid > 0 is that process only; any
// other value (kEveryProcess) every process that maps the file, whose
// events the programs then filter (traced tgids, a cgroup). The kernel
// spells "every process" 0 for multi links and -1 for perf links: only
// attach_uprobes() knows.
constexpr pid_t kEveryProcess = -1;

struct UprobeRequest {
  bpf_program* prog = nullptr;
  std::string path;                       // the module, as atrace reaches it
  std::vector<uint64_t> offsets;          // file offsets
  std::vector<uint64_t> cookies;          // one per offset; empty: all 0
  std::vector<uint64_t> ref_ctr_offsets;  // USDT semaphores, one per offset; empty: none
  bool ret = false;                       // return probes
  pid_t pid = kEveryProcess;
  bool multi = false;  // the program was loaded for uprobe_multi links
};

// Appends the links that hold every offset to `out`: all of them or none.
// Returns 0, or the kernel's errno (positive) when one offset was refused,
// no link of the request left behind.
int attach_uprobes(const UprobeRequest& r, std::vector<OwnedLink>& out);

}  // namespace atrace
