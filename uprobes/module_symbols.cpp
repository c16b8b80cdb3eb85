#include "uprobes/module_symbols.h"

#include <algorithm>

#include "uprobes/build_id.h"
#include "uprobes/debug_symbols.h"

namespace atrace::uprobes {

const ModuleSymbols::File& ModuleSymbols::file(const std::string& path, const std::string& build_id,
                                               bool debug_file) {
  auto [it, added] = files_.try_emplace(path + '\0' + build_id);
  if (!added) return it->second;
  File& f = it->second;
  if (!build_id.empty() && read_build_id(path) != build_id) return f;
  try {
    f.functions = debug_file ? read_debug_file_functions(path) : read_functions(path);
  } catch (const Error&) {
    return f;  // unreadable or stripped: its frames stay addresses
  }
  std::sort(f.functions.begin(), f.functions.end(),
            [](const ElfFunction& a, const ElfFunction& b) { return a.offset < b.offset; });
  f.usable = true;
  return f;
}

const ModuleSymbols::File& ModuleSymbols::found(const std::string& path,
                                                const std::string& build_id,
                                                const std::string& root) {
  auto [it, added] = found_.try_emplace(root + '\0' + path + '\0' + build_id, nullptr);
  if (!added) return *it->second;
  std::vector<std::pair<std::string, bool>> candidates;  // path, is a debug file
  if (!root.empty() && root != "/" && !path.empty() && path[0] == '/')
    candidates.emplace_back(root + path, false);
  candidates.emplace_back(path, false);
  if (auto debug = detail::build_id_debug_file(build_id); !debug.empty())
    candidates.emplace_back(debug, true);
  for (const auto& [c, debug] : candidates) {
    const File& f = file(c, build_id, debug);
    it->second = &f;
    if (f.usable) break;
  }
  return *it->second;
}

std::optional<CodeSymbol> ModuleSymbols::at(const std::string& path, const std::string& build_id,
                                            uint64_t offset, const std::string& root) {
  const File& f = found(path, build_id, root);
  if (!f.usable) return std::nullopt;
  auto it = std::upper_bound(f.functions.begin(), f.functions.end(), offset,
                             [](uint64_t off, const ElfFunction& fn) { return off < fn.offset; });
  if (it == f.functions.begin()) return std::nullopt;
  --it;
  if (offset - it->offset >= it->size) return std::nullopt;
  return CodeSymbol{it->demangled, offset - it->offset};
}

}  // namespace atrace::uprobes
