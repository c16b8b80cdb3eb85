// --cgroup=PATH: the cgroup v2 a recording traces, every process in it and
// in its descendants, those started there later included. The programs
// filter on its id (bpf/atrace_kernel.bpf.h, sched_process_exec); this
// finds the id, the depth and the processes in it now.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace atrace {

struct CgroupTarget {
  std::string path;    // the directory, e.g. /sys/fs/cgroup/unified/system.slice/x.service
  std::string shown;   // relative to the cgroup v2 root, "/system.slice/x.service"
  uint64_t id = 0;     // the cgroup v2 id: its directory's inode
  uint32_t level = 0;  // depth below the root (bpf_get_current_ancestor_cgroup_id)
};

// The cgroup v2 mount point, from /proc/self/mountinfo; "" when none.
std::string cgroup2_root();

// `given` absolute (a directory in the cgroup v2 tree) or relative to its
// root. Throws RecordError, one line: no cgroup v2 mounted, no such
// cgroup, a directory that is not a cgroup v2 one (a v1 controller's).
CgroupTarget resolve_cgroup(const std::string& given);

// The processes in the cgroup and its descendants now (cgroup.procs of
// each), in the order found, each once.
std::vector<pid_t> cgroup_processes(const CgroupTarget& cg);

}  // namespace atrace
