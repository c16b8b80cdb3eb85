// uprobe_multi links (Linux 6.6+): many uprobes of one file in one
// bpf(BPF_LINK_CREATE) call, each with its own cookie, torn down together
// with a single RCU grace period. Closing a perf-event uprobe waits for a
// grace period per probe (about 0.1 s here), which makes tearing down
// thousands of them take minutes; a multi link pays it once.
//
// libbpf 1.1 (Debian 12) has no wrapper and its UAPI headers predate the
// attach type, so the attribute layout is spelled out here
// (kernel-notes/uprobe-multi.md).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace atrace {

// The expected_attach_type a program must be loaded with to be used here.
constexpr unsigned kBpfTraceUprobeMulti = 48;  // BPF_TRACE_UPROBE_MULTI

// Returns a link fd, or -errno. `offsets` are file offsets in `path`;
// `ret` makes them return probes; `pid` limits them to that process.
// `ref_ctr_offsets`, empty or one per offset: file offsets of USDT
// semaphores the kernel counts up while the probe is in (0: none).
int uprobe_multi_link_create(int prog_fd, const std::string& path,
                             const std::vector<uint64_t>& offsets,
                             const std::vector<uint64_t>& cookies, bool ret, pid_t pid,
                             const std::vector<uint64_t>& ref_ctr_offsets = {});

}  // namespace atrace
