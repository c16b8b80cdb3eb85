// IFUNC symbols (STT_GNU_IFUNC: strlen, memcpy, strcmp in glibc) name a
// resolver that runs once, at load, and returns the implementation for this
// CPU (__strlen_avx2, ...). Probing the symbol's own address would count
// resolver runs, not calls. When atrace itself has the same file loaded (the
// system libc, libm, ...), its own dynamic linker has run the same resolver
// on the same CPU: dlsym() returns that choice, which is the implementation
// a traced process on this machine uses too (unless it was started with
// GLIBC_TUNABLES that change the CPU features glibc sees).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace atrace::uprobes {

struct IfuncTarget {
  uint64_t address = 0;  // in the file's address space (like st_value)
  uint64_t offset = 0;   // file offset of the implementation's first instruction
};

// The implementation `symbol` of `path` resolves to here; nullopt when this
// process has not loaded that very file (same device and inode) or the
// symbol does not resolve.
std::optional<IfuncTarget> resolve_ifunc_here(const std::string& path, const std::string& symbol);

}  // namespace atrace::uprobes
