#include "output/script_stack.h"

#include <cstdio>

namespace atrace::analysis {

void append_stack_lines(const std::vector<StackFrame>& frames, std::string& out) {
  char addr[32];
  for (const auto& f : frames) {
    std::snprintf(addr, sizeof addr, "\t%16llx ", static_cast<unsigned long long>(f.address));
    out += addr;
    out += frame_text(f);
    out += '\n';
  }
}

}  // namespace atrace::analysis
