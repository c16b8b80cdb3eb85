// The frames of the call stacks `record --stack` puts in entry events
// (Event::stack): each address named as function+offset in its module,
// against the modules the trace saw loaded in that process (MODULE_LOAD
// events: path, base, build id). Reading the module files is the caller's
// part (FrameSymbols): this layer does not read ELF.
//
//   FrameResolver  ModuleLoad/ModuleUnload events -> each process's modules;
//                  (pid, address) -> StackFrame
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "formats/trace_types.h"

namespace atrace::analysis {

struct StackFrame {
  uint64_t address = 0;
  std::string function;  // demangled; empty when not found
  uint64_t offset = 0;   // bytes into the function
  std::string module;    // file name of the module; empty when not found
};

// The function at `file_offset` of the module file at `path` whose build id
// is `build_id` ("" when it has none): its name and the bytes into it.
struct FrameSymbol {
  std::string name;
  uint64_t offset = 0;
};
using FrameSymbols = std::function<std::optional<FrameSymbol>(
    const std::string& path, const std::string& build_id, uint64_t file_offset)>;

class FrameResolver {
 public:
  explicit FrameResolver(FrameSymbols symbols) : symbols_(std::move(symbols)) {}
  // Every event goes by here, in time order: module events update the
  // process's modules (an unload is kept: a stack recorded before it may
  // still be named after it).
  void on_event(const formats::Event& ev);
  StackFrame resolve(uint32_t pid, uint64_t address) const;
  std::vector<StackFrame> resolve(const formats::Event& entry) const;

 private:
  struct Module {
    std::string path, build_id;
  };
  FrameSymbols symbols_;
  std::map<uint32_t, std::map<uint64_t, Module>> modules_;  // pid -> base -> module
};

// "symbol+0x1f (module)", or "[unknown] (module)" / "[unknown]": perf
// script's way of naming a frame.
std::string frame_text(const StackFrame& f);

}  // namespace atrace::analysis
