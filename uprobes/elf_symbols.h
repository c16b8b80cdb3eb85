// Function symbols of an ELF file (libelf), with the file offsets a uprobe
// needs and the first bytes of each function for probe-path classification.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "uprobes/error.h"

namespace atrace::uprobes {

class ElfError : public Error {
 public:
  using Error::Error;
};

struct ElfFunction {
  std::string mangled;  // the public name (see read_functions)
  std::string demangled;
  // The other names of the same address, demangled ("__libc_calloc" beside
  // "calloc", "__getpid" beside "getpid"): selectors match them too.
  std::vector<std::string> aliases;
  uint64_t address = 0;          // st_value
  uint64_t size = 0;             // st_size
  uint64_t offset = 0;           // file offset: address - (p_vaddr - p_offset) of its PT_LOAD
  bool ifunc = false;            // STT_GNU_IFUNC: the code at `address` is the resolver
  bool entry_point = false;      // the ELF entry point (e_entry: _start), never called
  bool in_plt = false;           // in .plt/.plt.got/.plt.sec: a stub, jumped through
  uint8_t first_bytes[16] = {};  // code at the entry as on disk, for classify_entry()
  size_t first_len = 0;
};

// Defined STT_FUNC/STT_GNU_IFUNC symbols of .symtab and .dynsym with non-zero
// size, one per address. Of the names an address has, the public one names
// it: a name without a leading underscore first ("calloc" over its global
// alias "__libc_calloc", "getpid" over "__getpid"), then global before weak
// before local, then the shortest; the others become `aliases`. Throws
// ElfError naming the file ("not an ELF file", "no function symbols
// (stripped?)").
std::vector<ElfFunction> read_functions(const std::string& path);

// The same for a separate debug file (/usr/lib/debug/.build-id/..., made
// by objcopy --only-keep-debug), which has the symbols but neither the code
// nor the file offsets of the file it was split from: the offsets are
// those of that file, its segments at their addresses less the first one's
// (how linkers lay them out); first_bytes stay empty.
std::vector<ElfFunction> read_debug_file_functions(const std::string& path);

}  // namespace atrace::uprobes
