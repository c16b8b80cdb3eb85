// The modules a recording probes, watched in the traced processes: each
// mapping and unmapping becomes a MODULE event (formats/trace_types.h)
// with the module's path, base address and build id, so that `script`
// and the reports can say when code arrived (docs/selectors.md).
//
// The kernel side is bpf/atrace_module.bpf.h (a uprobe on each module's
// DT_INIT and DT_FINI, uprobes/module_hooks.h); this part attaches it,
// finds the mappings that exist before the recording (attach mode), and
// turns a record's module index back into its file.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "formats/trace_types.h"
#include "record/attach.h"
#include "uprobes/probe_site.h"
#include "uprobes/proc_maps.h"
#include "uprobes/process_root.h"
#include "uprobes/usdt_select.h"

namespace atrace {

struct WatchedModule {
  std::string path;      // as atrace reaches it (uprobes/process_root.h)
  std::string build_id;  // hex, "" if the file has none
  uprobes::FileId id;    // what the process's mappings are matched by
};

// The files that have function probes or USDT probes, each once, in the
// plan's order: a record's module index is a position in this list.
// Their identities come from `modules` (the plan's: a running process's
// mappings, late modules' files), unknown in launch mode, which needs none.
std::vector<WatchedModule> watched_modules(const std::vector<uprobes::ProbeSite>& sites,
                                           const std::vector<uprobes::UsdtTarget>& usdt,
                                           const std::vector<uprobes::Module>& modules);

// The hooks' uprobes, owned (RAII): `program` (module_hook) on each
// module's DT_INIT and DT_FINI, in process `pid` (-1: every process, for
// --follow-forks). A module without them, or whose probe the kernel
// refuses, gets no MODULE events: how many is `unwatched()`. With
// `dynamic_linker` (its path: a module is waited for), one more on its
// _dl_debug_state, cookie ATRACE_MODULE_LINK_MAP (bpf/atrace.h).
class ModuleWatch {
 public:
  ModuleWatch(bpf_program* program, const std::vector<WatchedModule>& modules, pid_t pid,
              const std::string& dynamic_linker = {});
  size_t unwatched() const { return unwatched_; }

 private:
  std::vector<OwnedLink> links_;
  size_t unwatched_ = 0;
};

// The watched files process `pid` maps now (attach mode): one ModuleLoad
// event each, stamped `ts` (their DT_INIT ran before the recording).
std::vector<formats::Event> modules_mapped_now(const std::vector<WatchedModule>& modules, pid_t pid,
                                               uint64_t ts);

// A MODULE event of module `index` (ModuleLoad or ModuleUnload); the path
// is "?" for an index the list does not have.
formats::Event module_event(const std::vector<WatchedModule>& modules, formats::EventKind kind,
                            uint32_t index, uint64_t base);

}  // namespace atrace
