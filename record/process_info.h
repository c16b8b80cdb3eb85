// What the user knows a traced process by, read from /proc while it lives:
// its pid in its own pid namespace (a container's "1"), its pid and mount
// namespaces, its cgroup v2 path and the container or service that names,
// and the directory that is its root as atrace sees it (a chroot's, or a
// container's root file system found from the mounts). The trace's process
// table (formats/FORMAT.md, PROCESSES) is made of these.
//
//   process_info     one process, now
//   cgroup_name      "nginx.service", a container id's short form, or ""
//   ProcessTable     the processes of a recording: each collected once,
//                    when it becomes traced, until written
#pragma once

#include <sys/types.h>

#include <string>
#include <unordered_set>
#include <vector>

#include "formats/trace_types.h"

namespace atrace {

// Never throws: what cannot be read (the process is gone, not ours to look
// into) stays unknown (0 / ""); pid is always set.
formats::ProcessInfo process_info(pid_t pid);

// The container or service a cgroup v2 path names: its innermost part that
// is a container engine's scope ("libpod-ID.scope", "docker-ID.scope",
// "cri-containerd-ID.scope", "crio-ID.scope", or a bare 64-digit id) gives
// the id's first 12 digits, as `podman ps` and `docker ps` show it; else a
// systemd service ("nginx.service"); else "".
std::string cgroup_name(const std::string& cgroup);

class ProcessTable {
 public:
  // Process `pid` became traced (attached to, launched, forked by a traced
  // one, found in a traced cgroup): collected now, unless it was before.
  // True when it is new.
  bool note(pid_t pid);
  // The processes noted since the last call, for the trace file.
  std::vector<formats::ProcessInfo> take_new();
  // Every process noted so far.
  const std::vector<formats::ProcessInfo>& all() const { return all_; }

 private:
  std::unordered_set<pid_t> seen_;
  std::vector<formats::ProcessInfo> all_;
  size_t taken_ = 0;
};

}  // namespace atrace
