// What `atrace record` says about its probes once they are in: one line
// with how many there are, which path the kernel runs each on (the main
// factor of a hit's cost), the kind of links and the attach time
// (bench/attach_time.sh reads it), and one line on what the kernel groups
// cost the traced calls.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "formats/trace_types.h"

namespace atrace {

// `multi`: the probes are on uprobe_multi links; `kernel_groups` as in
// kernel_groups.h.
void announce_probes(const std::vector<formats::ProbeInfo>& table, uint64_t attach_ns, bool multi,
                     unsigned kernel_groups);

// Which processes are traced, each with its program's name and, when it
// sees another file system than atrace, its mount namespace and root:
// "atrace: tracing 2 processes: 1234 (server), 5678 (server; mount
// namespace mnt:[4026532281], root /var/lib/c1)". `cgroup`, when given,
// is --cgroup's path below the cgroup v2 root.
void announce_targets(const std::vector<pid_t>& pids, const std::string& cgroup);

// One process as announce_targets() names it: "5678 (server; ...)".
std::string describe_process(pid_t pid);

}  // namespace atrace
