// Moving a function's first instructions out of the way of a 5-byte jump
// (x86-64): the entry of a function patched for the fast path becomes
// `jmp rel32` to its trampoline, and the whole instructions the jump
// overwrites run in the trampoline instead, rewritten for their new address:
//
//  - a RIP-relative operand gets its displacement recomputed (refused when
//    the new one does not fit in 32 bits);
//  - a relative jmp becomes `jmp *0(%rip); .quad target`; a relative jcc,
//    loop or jrcxz keeps its condition over a short hop:
//    `jcc +2; jmp +14; jmp *0(%rip); .quad target`;
//  - a relative call becomes a push of its original return address and an
//    absolute jump, so that the callee returns into the original code (and
//    unwinders and backtraces see the real caller): it must therefore be the
//    last instruction replaced, since the bytes after it are overwritten;
//  - anything else is copied as is (endbr64 included: it is a no-op where it
//    is not a branch target, and the trampoline is reached by a direct jump).
//
// Nothing may jump into the replaced bytes other than at their start: the
// function's own code is checked here (given whole), the rest of the module
// with uprobes::CodeEntries (entry_branch_refusal). The decoding is Zydis's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace atrace::uprobes {
class CodeEntries;
}

namespace atrace::fastpath {

inline constexpr size_t kJumpBytes = 5;  // jmp rel32

struct RelocatedEntry {
  size_t replaced = 0;        // bytes of the entry the jump overwrites (whole instructions, >= 5)
  std::vector<uint8_t> code;  // them, to run at `to`, with the jump back to from + replaced
  std::string refusal;        // why the entry cannot be moved; empty when it can
  bool ok() const { return refusal.empty(); }
};

// The entry of the function at address `from`, whose code is `code[0, len)`
// (`whole`: len is the whole function, its st_size; otherwise at least its
// first 32 bytes or all of it, and the function's own branches are not
// checked), rewritten to run at address `to`.
RelocatedEntry relocate_entry(const uint8_t* code, size_t len, uint64_t from, uint64_t to,
                              bool whole);

// Why the module's own code forbids replacing `replaced` bytes at the
// function whose link-time address is `vaddr`: a branch, call, code address
// or relocation of the module lands inside (vaddr, vaddr + replaced). Empty
// when nothing does.
std::string entry_branch_refusal(const uprobes::CodeEntries& entries, uint64_t vaddr,
                                 size_t replaced);

}  // namespace atrace::fastpath
