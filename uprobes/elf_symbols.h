// Function symbols of an ELF file (libelf), with the file offsets a uprobe
// needs and the first bytes of each function for probe-path classification.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace atrace::uprobes {

class ElfError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ElfFunction {
  std::string mangled;
  std::string demangled;
  uint64_t address = 0;  // st_value
  uint64_t size = 0;     // st_size
  uint64_t offset = 0;   // file offset: address - (p_vaddr - p_offset) of its PT_LOAD
  bool ifunc = false;    // STT_GNU_IFUNC: the code at `address` is the resolver
  uint8_t first_bytes[16] = {};  // code at the entry, for classify_entry()
  size_t first_len = 0;
};

// Defined STT_FUNC/STT_GNU_IFUNC symbols of .symtab and .dynsym with non-zero
// size, one per address (aliases collapsed: global before weak before local,
// then shortest name). Throws ElfError naming the file ("not an ELF file",
// "no function symbols (stripped?)").
std::vector<ElfFunction> read_functions(const std::string& path);

}  // namespace atrace::uprobes
