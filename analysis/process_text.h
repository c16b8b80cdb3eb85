// How every view names a traced process with what the user knows it by
// (the trace's process table, formats::ProcessInfo): its pid in its own
// pid namespace next to the host's, its cgroup, its container or service.
// One rule, so report, script and the exporters say the same.
#pragma once

#include <string>
#include <vector>

#include "formats/trace_types.h"

namespace atrace::analysis {

// Whether the table says more than the host pid: another pid namespace, a
// cgroup other than the root, a container or service.
bool worth_showing(const formats::ProcessInfo& p);

// "container 3f2a9c1b0d4e" or "service nginx.service"; "" without a name.
std::string container_label(const formats::ProcessInfo& p);

// "pid 14235 (1 in its namespace), cgroup /machine.slice/libpod-3f2a.scope,
// container 3f2a9c1b0d4e": the parts the table has.
std::string process_description(const formats::ProcessInfo& p);

// What a process's name gets in the exporters' process lists:
// " [container 3f2a9c1b0d4e] pid 1", " [service nginx.service]", " pid 1",
// or "" when there is nothing to add.
std::string process_tag(const formats::ProcessInfo& p);

// What every view calls the recordings of a merged trace
// (TraceReader::hosts()), by Event::host: the host name, with "#N" (its
// index) where two recordings have the same name (two processes of one
// machine recorded apart), "host<N>" without one. Empty for a single
// recording: views show hosts only when there are several.
std::vector<std::string> host_labels(const std::vector<formats::HostClocks>& hosts);

}  // namespace atrace::analysis
