#include "analysis/stack_frames.h"

#include <cstdio>

namespace atrace::analysis {

namespace {

std::string file_name(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

void FrameResolver::on_event(const formats::Event& ev) {
  if (ev.kind != formats::EventKind::ModuleLoad) return;
  modules_[ev.pid][ev.arg0] = Module{ev.text, formats::module_build_id(ev)};
}

// The module of the highest base at or below the address. MODULE_LOAD has
// no size, so an address in a module the trace did not see loaded lands in
// the one below it: the symbol lookup then finds no function there, and
// the frame stays an address.
StackFrame FrameResolver::resolve(uint32_t pid, uint64_t address) const {
  StackFrame f;
  f.address = address;
  auto p = modules_.find(pid);
  if (p == modules_.end() || !symbols_) return f;
  auto it = p->second.upper_bound(address);
  if (it == p->second.begin()) return f;
  --it;
  const Module& m = it->second;
  if (auto sym = symbols_(m.path, m.build_id, address - it->first)) {
    f.function = sym->name;
    f.offset = sym->offset;
    f.module = file_name(m.path);
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
