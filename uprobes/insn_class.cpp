// Classifying the first instruction of a function by the path the x86-64
// kernel takes for a uprobe on it (arch/x86/kernel/uprobes.c): emulated
// instructions cost about 20x less than single-stepped ones. Only encodings
// we are sure of are called Emulated; anything unknown is SingleStep.
#include "uprobes/insn_class.h"

namespace atrace::uprobes {

namespace {

using formats::ProbePath;

// 0f 1f /0 (the multi-byte NOP family), after optional 66 and 2e prefixes,
// as emitted by assemblers for padding: 0f 1f 00, 0f 1f 40 00,
// 66 0f 1f 44 00 00, 66 2e 0f 1f 84 00 00 00 00 00, ...
bool is_multibyte_nop(const uint8_t* code, size_t len) {
  size_t i = 0;
  while (i < len && (code[i] == 0x66 || code[i] == 0x2e)) ++i;
  if (i + 2 >= len) return false;
  return code[i] == 0x0f && code[i + 1] == 0x1f && ((code[i + 2] >> 3) & 7) == 0;
}

}  // namespace

// The kernel refuses (arch/x86/kernel/uprobes.c) instructions with an ES,
// CS, SS, DS segment or LOCK prefix, and traps it must not step over. In
// launch mode such a probe is registered before the code is mapped and the
// refusal is silent: the function would just show no calls. So it is
// caught here instead.
bool kernel_refuses(const uint8_t* code, size_t len) {
  for (size_t i = 0; i < len; ++i) {
    switch (code[i]) {
      case 0x26:
      case 0x2e:
      case 0x36:
      case 0x3e:
      case 0xf0: return true;  // refused prefixes
      case 0x64:
      case 0x65:
      case 0x66:
      case 0x67:
      case 0xf2:
      case 0xf3: continue;  // other legacy prefixes: look at the next byte
      case 0xcc:
      case 0xcd:
      case 0xce:
      case 0xf4: return true;  // int3, int n, into, hlt
      case 0x0f:
        return i + 1 < len && (code[i + 1] == 0x05 || code[i + 1] == 0x34);  // syscall, sysenter
      case 0x62:
        // EVEX (AVX-512 encodings; 0x62 is no BOUND in 64-bit mode): the
        // kernel accepts the probe but runs the instruction wrongly out of
        // line, and the program computes garbage (glibc's EVEX strchrnul
        // makes printf print its format string; bpftrace does the same:
        // kernel-notes/evex-single-step.md). Not probed.
        return true;
      default: return false;
    }
  }
  return false;
}

ProbePath classify_entry(const uint8_t* code, size_t len) {
  if (!code || len == 0) return ProbePath::Unknown;
  if (kernel_refuses(code, len)) return ProbePath::Refused;
  const uint8_t b0 = code[0];

  // The canonical 5-byte NOP, exactly: the optimized-uprobe site.
  if (len >= 5 && b0 == 0x0f && code[1] == 0x1f && code[2] == 0x44 && code[3] == 0x00 &&
      code[4] == 0x00)
    return ProbePath::Nop5;

  if (b0 == 0x90) return ProbePath::Emulated;                                 // nop
  if (b0 == 0x66 && len >= 2 && code[1] == 0x90) return ProbePath::Emulated;  // xchg ax,ax
  if (is_multibyte_nop(code, len)) return ProbePath::Emulated;

  if (b0 >= 0x50 && b0 <= 0x57) return ProbePath::Emulated;  // push r64
  if (b0 == 0x41 && len >= 2 && code[1] >= 0x50 && code[1] <= 0x57)
    return ProbePath::Emulated;  // push r8..r15

  if (b0 == 0xe8 || b0 == 0xe9 || b0 == 0xeb) return ProbePath::Emulated;  // call/jmp rel
  if (b0 >= 0x70 && b0 <= 0x7f) return ProbePath::Emulated;                // jcc rel8
  if (b0 == 0x0f && len >= 2 && code[1] >= 0x80 && code[1] <= 0x8f)
    return ProbePath::Emulated;  // jcc rel32

  // endbr64 (f3 0f 1e fa) and everything else is copied out of line.
  return ProbePath::SingleStep;
}

}  // namespace atrace::uprobes
