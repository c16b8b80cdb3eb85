// Code addresses named as function+offset in their module: the frames of
// the call stacks `record --stack` puts in entry events (Event::stack), a
// fault's ip. The module is the one the trace says was mapped there at
// that point of the reading (TraceReader::module_at, from the MODULE_LOAD
// events: path, base, build id); reading the module files is the caller's
// part (FrameSymbols): this layer does not read ELF.
//
//   FrameResolver  (pid, address) -> StackFrame
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "formats/trace_reader.h"
#include "formats/trace_types.h"

namespace atrace::analysis {

struct StackFrame {
  uint64_t address = 0;
  std::string function;  // demangled; empty when not found
  uint64_t offset = 0;   // bytes into the function
  std::string module;    // file name of the module; empty when not found
};

// The function at `file_offset` of the module `m` (its file at m.path,
// whose build id is m.build_id, "" when it has none; a container's file
// may be under m.root): its name and the bytes into it.
struct FrameSymbol {
  std::string name;
  uint64_t offset = 0;
};
using FrameSymbols =
    std::function<std::optional<FrameSymbol>(const formats::MappedModule& m, uint64_t file_offset)>;

// The module mapped at `address` in process `pid` now (TraceReader's
// module_at), or nullptr.
using ModuleAt = std::function<const formats::MappedModule*(uint32_t pid, uint64_t address)>;

class FrameResolver {
 public:
  FrameResolver(ModuleAt module_at, FrameSymbols symbols)
      : module_at_(std::move(module_at)), symbols_(std::move(symbols)) {}
  // Called as the events are read: the modules are those mapped then.
  StackFrame resolve(uint32_t pid, uint64_t address) const;
  std::vector<StackFrame> resolve(const formats::Event& entry) const;

 private:
  ModuleAt module_at_;
  FrameSymbols symbols_;
};

// "symbol+0x1f (module)", or "[unknown] (module)" / "[unknown]": perf
// script's way of naming a frame.
std::string frame_text(const StackFrame& f);

}  // namespace atrace::analysis
