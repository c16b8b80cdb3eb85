// USDT sites attached by atrace itself on uprobe_multi links: each site's
// argument locations, as the note writes them ("-4@%edi", "8@-16(%rbp)",
// "4@$5"), turned into the spec libbpf's usdt.bpf.h reads at a hit
// (bpf/usdt_spec.h), and the table of those specs in the BPF map.
//
//   usdt_bpf_spec(site, cookie)   one site's spec, or why it cannot be read
//   UsdtSpecTable                 the specs in the map; a hit's link cookie
//                                 is its spec's index
//
// Why not libbpf's bpf_program__attach_usdt(): in libbpf 1.1 it attaches a
// perf-event uprobe per site, which the kernel refuses to a process bound
// to CAP_BPF and CAP_PERFMON (docs/privileges.md), and whose teardown
// waits a grace period per site. A uprobe_multi link needs neither, and
// carries the semaphores as reference counters (ref_ctr_offsets).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "bpf/usdt_spec.h"
#include "uprobes/usdt_notes.h"

namespace atrace {

// The spec of `site` with `cookie` for bpf_usdt_cookie(). nullopt when an
// argument's location is not one usdt.bpf.h can read (a register it does
// not know, an index register); `error` then names it.
std::optional<atrace_usdt_spec> usdt_bpf_spec(const uprobes::UsdtProbe& site, uint64_t cookie,
                                              std::string* error);

class UsdtSpecTable {
 public:
  UsdtSpecTable(int map_fd, uint32_t capacity) : map_fd_(map_fd), capacity_(capacity) {}
  // The index of the spec of `site` with `cookie`, written to the map when
  // new (sites with the same locations and cookie share one). nullopt with
  // `error` set when it cannot be read or the map is full.
  std::optional<uint32_t> add(const uprobes::UsdtProbe& site, uint64_t cookie, std::string* error);

 private:
  int map_fd_;
  uint32_t capacity_;
  std::map<std::string, uint32_t> ids_;  // the spec's bytes -> its index
};

}  // namespace atrace
