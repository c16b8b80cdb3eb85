// What `atrace record` says about its probes once they are in: one line
// with how many there are, which path the kernel runs each on (the main
// factor of a hit's cost), the kind of links and the attach time
// (bench/attach_time.sh reads it), and one line on what the kernel groups
// cost the traced calls.
#pragma once

#include <cstdint>
#include <vector>

#include "formats/trace_types.h"

namespace atrace {

// `multi`: the probes are on uprobe_multi links; `kernel_groups` as in
// kernel_groups.h.
void announce_probes(const std::vector<formats::ProbeInfo>& table, uint64_t attach_ns, bool multi,
                     unsigned kernel_groups);

}  // namespace atrace
