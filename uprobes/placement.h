// Where a function's entry probe goes: on the cheapest instruction of its
// prefix, not always on its first one (x86-64).
//
// A uprobe on an instruction the kernel single-steps costs 15-20 times one on
// an instruction it emulates or on an optimized NOP5
// (kernel-notes/emulated-vs-single-step.md), and many functions start with a
// single-stepped one (`endbr64`, `mov`, `sub $N,%rsp`) followed a few bytes
// later by a cheap one (`push %rbp`, the NOP5 of -mnop-mcount). The probe can
// move there when every call still passes it exactly once with the return
// address at [rsp], which the entry record's stack depth and the return
// probe's hijack (prepare_uretprobe reads the return address at regs->sp when
// the breakpoint at the probe's offset is hit) both rely on. The instructions
// before the probe, the *prefix*, must therefore:
//
//  - not read or write the stack pointer (no push/pop/call/sub %rsp/red-zone
//    store...): [rsp] is still the return address at the probe, and the
//    kernel's liveness check of return instances (by stack position) holds;
//  - not branch or trap (jmp/jcc/call/ret/syscall/int/ud2...): every call
//    runs the whole prefix and reaches the probe;
//  - not be entered other than from the function's first byte: no direct
//    branch or call of the module, no function symbol and no code address
//    taken RIP-relatively or stored in the module's relocated data points
//    into (start, probe]. A branch to the start itself is fine: it passes
//    the probe as it passes one at +0.
//
// The probed instruction itself may push or branch: the probe fires before
// it runs. The prefix runs natively, so its RIP-relative operands need no
// care; only the probed instruction is run by the kernel, and it is one the
// kernel emulates or optimizes, never one it copies out of line.
//
// A function that jumps indirectly (jump tables, whose targets are not in the
// code) or whose code does not decode keeps its probe at +0. The decoding is
// Zydis's (libzydis-dev); which instructions the kernel emulates is decided
// on their bytes by uprobes/insn_class.h, the kernel's own rule.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "formats/trace_types.h"

namespace atrace::uprobes {

// The kernel's path for a probe on the instruction at `code` (file offset
// `offset`): classify_entry(), with the NOP5 downgraded to Emulated where the
// kernel cannot optimize it (no optimized uprobes, or across a page).
formats::ProbePath path_at(const uint8_t* code, size_t len, uint64_t offset, bool nop5_supported);

struct EntryPlacement {
  uint64_t delta = 0;  // bytes from the function's first instruction to the probe
  formats::ProbePath path = formats::ProbePath::Unknown;  // the kernel's path there
};

// The place for the entry probe of a function from its own code: `code`
// holds the whole function (`len` bytes, its st_size) and `offset` is the
// file offset of its first byte. delta 0 when no instruction of the prefix is
// cheaper than the first, or when the function's code forbids moving (an
// indirect jump, a branch into the prefix, code that does not decode). With
// only the first bytes known (len shorter than the function), pass
// whole = false: the probe stays at +0.
EntryPlacement place_entry(const uint8_t* code, size_t len, uint64_t offset, bool nop5_supported,
                           bool whole = true);

// The addresses of a module by which code can be entered other than at a
// function start the caller knows of: direct branch and call targets, code
// addresses referenced RIP-relatively, code addresses in R_X86_64_RELATIVE
// relocations, and the given function starts. Built once per module, only
// when a probe is to move (it decodes all executable code: ~10 ms for libc).
class CodeEntries {
 public:
  CodeEntries(const std::string& path, std::vector<uint64_t> function_starts);
  // Is any entry in (after, upto]?
  bool any_in(uint64_t after, uint64_t upto) const;
  bool ok() const { return ok_; }  // false: the module could not be read (then any_in is true)

 private:
  std::vector<uint64_t> entries_;  // sorted, unique
  bool ok_ = false;
};

}  // namespace atrace::uprobes
