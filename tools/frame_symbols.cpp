#include "tools/frame_symbols.h"

#include <memory>

#include "base/symbol_name.h"
#include "uprobes/module_symbols.h"

namespace atrace::tools {

analysis::FrameResolver trace_frames(const formats::TraceReader& reader) {
  auto files = std::make_shared<uprobes::ModuleSymbols>();
  auto symbols = [files](const formats::MappedModule& m,
                         uint64_t offset) -> std::optional<analysis::FrameSymbol> {
    auto sym = files->at(m.path, m.build_id, offset, m.root);
    if (!sym) return std::nullopt;
    return analysis::FrameSymbol{base::short_name(sym->name), sym->offset};
  };
  auto module_at = [&reader](uint32_t pid, uint64_t address) {
    return reader.module_at(pid, address);
  };
  return analysis::FrameResolver(module_at, symbols);
}

}  // namespace atrace::tools
