// Where the symbols of a stripped file are: distributions strip programs and
// libraries and ship their symbol tables apart, and perf, gdb and uftrace
// read them there. In the order looked at:
//   - a separate debug file by build id, /usr/lib/debug/.build-id/xx/rest.debug
//     (Debian's -dbgsym and libc6-dbg packages), in the process's root first
//     (a container's) then atrace's;
//   - a separate debug file by .gnu_debuglink: beside the file, in its
//     .debug/ directory, under /usr/lib/debug/ (the file's build id must
//     match where it has one);
//   - MiniDebugInfo: .gnu_debugdata, an xz-compressed ELF file inside the
//     file with the function symbols .dynsym lacks (Fedora's binaries).
// What uprobes/elf_symbols.h reads besides the file's own tables.
#pragma once

#include <libelf.h>

#include <memory>
#include <string>
#include <vector>

#include "uprobes/elf_file.h"

namespace atrace::uprobes::detail {

// The extra symbol tables of one file, owned: their Elf handles live as long
// as this does.
class DebugSymbols {
 public:
  // `path`: the file as atrace reaches it (uprobes/process_root.h); `elf`:
  // it, open. Finds nothing when the file has its own .symtab.
  DebugSymbols(const std::string& path, Elf* elf);
  DebugSymbols(const DebugSymbols&) = delete;
  DebugSymbols& operator=(const DebugSymbols&) = delete;
  ~DebugSymbols();

  Elf* elf() const { return elf_; }  // null: none found
  // Where they came from, for messages: a path, or "MiniDebugInfo".
  const std::string& source() const { return source_; }

 private:
  std::unique_ptr<ElfFile> file_;  // a separate debug file
  std::vector<char> image_;        // MiniDebugInfo, decompressed
  Elf* mem_ = nullptr;             // elf_memory over image_
  Elf* elf_ = nullptr;
  std::string source_;
};

// Where the separate debug file of build `build_id` is (gdb's rule: its
// first two digits are a directory), under `root` ("" or "/proc/PID/root");
// "" for an id too short to be one.
std::string build_id_debug_file(const std::string& build_id, const std::string& root = "");

// Whether the file has a .symtab of its own (not stripped).
bool has_symtab(Elf* elf);

// Where a separate debug file of `path` would be looked for, in order
// (for messages naming what to install).
std::vector<std::string> debug_file_candidates(const std::string& path, Elf* elf);

}  // namespace atrace::uprobes::detail
