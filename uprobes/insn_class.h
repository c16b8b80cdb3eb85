// Which path the kernel takes for a uprobe on an instruction (x86-64): the
// main factor of a probe hit's cost. See kernel-notes/.
#pragma once

#include <cstddef>
#include <cstdint>

#include "formats/trace_types.h"

namespace atrace::uprobes {

// Nop5 for 0f 1f 44 00 00 (optimized uprobes, Linux 6.18+, when the kernel
// supports them: callers downgrade to Emulated otherwise), Emulated for what
// the kernel emulates (push reg, 1-byte nop 0x90, multi-byte nops, call/jmp
// rel32/rel8, jcc), SingleStep for everything else.
formats::ProbePath classify_entry(const uint8_t* code, size_t len);

}  // namespace atrace::uprobes
