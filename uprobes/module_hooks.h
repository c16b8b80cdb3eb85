// Where a module's life shows in its own code: DT_INIT, the first of its
// code the dynamic linker runs once it has mapped and relocated it, and
// DT_FINI, run when it is unloaded (dlclose) or the process exits. A probe
// on each tells a recording when the module arrived and left
// (record/module_watch.h).
#pragma once

#include <cstdint>
#include <string>

namespace atrace::uprobes {

struct ModuleHook {
  bool present = false;
  uint64_t offset = 0;     // file offset of the function (where the uprobe goes)
  uint64_t from_base = 0;  // its distance from the module's lowest mapped address
};

struct ModuleHooks {
  ModuleHook init, fini;
};

// Empty hooks for a file that cannot be read, or has no DT_INIT/DT_FINI
// (a module linked without the C runtime's crti.o).
ModuleHooks module_hooks(const std::string& path);

}  // namespace atrace::uprobes
