#include "tools/frame_symbols.h"

#include <memory>

#include "uprobes/module_symbols.h"

namespace atrace::tools {

analysis::FrameSymbols module_frame_symbols() {
  auto files = std::make_shared<uprobes::ModuleSymbols>();
  return [files](const std::string& path, const std::string& build_id,
                 uint64_t offset) -> std::optional<analysis::FrameSymbol> {
    auto sym = files->at(path, build_id, offset);
    if (!sym) return std::nullopt;
    return analysis::FrameSymbol{sym->name, sym->offset};
  };
}

}  // namespace atrace::tools
