// Where the dynamic linker would find a library a process has not loaded
// yet (dlopen(3) of a name): the files on disk that a module name or glob
// of a selector can stand for.
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

#include "uprobes/proc_maps.h"
#include "uprobes/process_root.h"

namespace atrace::uprobes {

struct LibrarySearch {
  // The process's root: the directories and the cache below are its paths,
  // read through it (a container's own ld.so.cache and /usr/lib).
  ProcessRoot root;
  // In ld.so's order: DT_RPATH of the modules (those without DT_RUNPATH),
  // LD_LIBRARY_PATH, DT_RUNPATH of the modules ($ORIGIN expanded), then
  // the system directories.
  std::vector<std::string> dirs;
  std::vector<std::pair<std::string, std::string>> cache;  // ld.so.cache: name -> path
  int elf_class = 0;                                       // ELFCLASS64 ...: of the main module
  int machine = 0;                                         // EM_X86_64 ...
};

// The search of a process whose modules (main executable first) are
// `modules`, whose LD_LIBRARY_PATH is `ld_library_path` and whose root is
// `root`.
LibrarySearch library_search(const std::vector<Module>& modules, const std::string& ld_library_path,
                             const ProcessRoot& root = {});

// LD_LIBRARY_PATH of a running process (/proc/PID/environ), "" if unset or
// unreadable.
std::string ld_library_path_of(pid_t pid);

struct FoundLibrary {
  std::string name;  // as the linker would be asked for it ("libz.so.1")
  std::string path;  // the real file (realpath in the process's root), reached from here
};

// The shared libraries whose file name matches `glob` (fnmatch), first
// directory in search order winning for each name, then the cache; each
// real file once, only those of the main module's ELF class and machine.
std::vector<FoundLibrary> find_library_files(const std::string& glob, const LibrarySearch& s);

}  // namespace atrace::uprobes
