#include "uprobes/module_symbols.h"

#include <algorithm>

#include "uprobes/build_id.h"

namespace atrace::uprobes {

const ModuleSymbols::File& ModuleSymbols::file(const std::string& path,
                                               const std::string& build_id) {
  auto [it, added] = files_.try_emplace(path + '\0' + build_id);
  if (!added) return it->second;
  File& f = it->second;
  if (!build_id.empty() && read_build_id(path) != build_id) return f;
  try {
    f.functions = read_functions(path);
  } catch (const Error&) {
    return f;  // unreadable or stripped: its frames stay addresses
  }
  std::sort(f.functions.begin(), f.functions.end(),
            [](const ElfFunction& a, const ElfFunction& b) { return a.offset < b.offset; });
  f.usable = true;
  return f;
}

std::optional<CodeSymbol> ModuleSymbols::at(const std::string& path, const std::string& build_id,
                                            uint64_t offset) {
  const File& f = file(path, build_id);
  if (!f.usable) return std::nullopt;
  auto it = std::upper_bound(f.functions.begin(), f.functions.end(), offset,
                             [](uint64_t off, const ElfFunction& fn) { return off < fn.offset; });
  if (it == f.functions.begin()) return std::nullopt;
  --it;
  if (offset - it->offset >= it->size) return std::nullopt;
  return CodeSymbol{it->demangled, offset - it->offset};
}

}  // namespace atrace::uprobes
