// The function at a file offset of a module, for the addresses of a trace's
// call stacks (record --stack), named at report time from the module files
// the trace names (read_functions: the same names the probes have).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "uprobes/elf_symbols.h"

namespace atrace::uprobes {

struct CodeSymbol {
  std::string name;     // demangled
  uint64_t offset = 0;  // bytes into the function
};

class ModuleSymbols {
 public:
  // The function whose code holds file offset `offset` of the module at
  // `path`; nullopt when the file cannot be read, has no such function, or
  // is not the build the trace saw (`build_id` given and different: it was
  // rebuilt since). Each file is read once.
  //
  // `root`: the directory that was the process's root (a container's,
  // ProcessInfo::root), "" when none. The module is looked for, in order,
  // as `root` + `path` (a container's file, read after the container is
  // gone while its root stays on the host), as `path`, then as the
  // separate debug file of its build id
  // (/usr/lib/debug/.build-id/xx/rest.debug); the first of the right
  // build is used.
  std::optional<CodeSymbol> at(const std::string& path, const std::string& build_id,
                               uint64_t offset, const std::string& root = "");

 private:
  struct File {
    bool usable = false;
    std::vector<ElfFunction> functions;  // by file offset
  };
  const File& file(const std::string& path, const std::string& build_id, bool debug_file = false);
  const File& found(const std::string& path, const std::string& build_id, const std::string& root);
  std::map<std::string, File> files_;         // by path and build id
  std::map<std::string, const File*> found_;  // by root, path and build id
};

}  // namespace atrace::uprobes
