#include "analysis/stack_frames.h"

#include <cstdio>

namespace atrace::analysis {

namespace {

std::string file_name(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

// MODULE_LOAD has no size, so an address in a module the trace did not
// see loaded lands in the one below it: the symbol lookup then finds no
// function there, and the frame stays an address.
StackFrame FrameResolver::resolve(uint32_t pid, uint64_t address) const {
  StackFrame f;
  f.address = address;
  const formats::MappedModule* m = module_at_ ? module_at_(pid, address) : nullptr;
  if (!m || !symbols_) return f;
  // base: where the file's offset 0 is mapped.
  if (auto sym = symbols_(*m, address - m->base)) {
    f.function = sym->name;
    f.offset = sym->offset;
    f.module = file_name(m->path);
  }
  return f;
}

std::vector<StackFrame> FrameResolver::resolve(const formats::Event& entry) const {
  std::vector<StackFrame> out;
  out.reserve(entry.stack.size());
  for (uint64_t a : entry.stack) out.push_back(resolve(entry.pid, a));
  return out;
}

std::string frame_text(const StackFrame& f) {
  if (f.function.empty()) return f.module.empty() ? "[unknown]" : "[unknown] (" + f.module + ")";
  char off[24];
  std::snprintf(off, sizeof off, "+0x%llx", static_cast<unsigned long long>(f.offset));
  return f.function + off + " (" + f.module + ")";
}

}  // namespace atrace::analysis
