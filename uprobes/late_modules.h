// Modules that arrive later: what a selector's module names when the
// process has not mapped it (yet), found on disk where the dynamic linker
// would find it. Uprobes are bound to a file, not to a process: attached to
// that file now, the kernel installs them when the process maps it (after
// dlopen), and takes them away with the mapping (dlclose).
#pragma once

#include <string>
#include <vector>

#include "uprobes/library_search.h"
#include "uprobes/proc_maps.h"
#include "uprobes/selector.h"

namespace atrace::uprobes {

// For each include selector whose module matches none of `modules`: the
// files it can stand for, as Modules with `waiting` set (each file once, none
// already in `modules`). A path is taken as it is (a path glob is expanded);
// a name or glob is searched as `search` says. A path is the process's
// (search.root), unless it is already one atrace reaches it by
// ("/proc/PID/root/...").
//
// Throws SelectorError, one line naming the selector, for a path that does
// not exist, a file that is not ELF, and a name that matches nothing mapped
// and no file where the dynamic linker looks.
std::vector<Module> late_modules(const std::vector<Selector>& include,
                                 const std::vector<Module>& modules, const LibrarySearch& search);

// late_modules() appended to `modules`, searching as a process with those
// modules, that LD_LIBRARY_PATH and that root would; nothing is searched
// when every selector's module is mapped. What `record` and `list` use.
void add_late_modules(const std::vector<Selector>& include, std::vector<Module>& modules,
                      const std::string& ld_library_path, const ProcessRoot& root = {});

}  // namespace atrace::uprobes
