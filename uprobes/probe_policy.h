// Which probes a function may get. A return probe (uretprobe) replaces the
// return address on the stack at the function's entry with the kernel's
// trampoline; that is only correct where a `call` just pushed one and the
// function will come back through it exactly once. Everywhere else the
// probe would damage the program, so atrace never puts one there:
//
//  - non-entry fragments (GCC's "f [clone .cold]"): jumped into from the
//    middle of f, the stack slot is not a return address; not a function,
//    so no probe at all (an entry probe would count jumps as calls);
//  - code that is not called: the ELF entry point (_start, whose stack slot
//    is argc), signal-return trampolines (__restore_rt), PLT stubs and the
//    dynamic linker's resolver stubs (_dl_runtime_resolve*), jumped to with
//    data on the stack;
//  - functions whose return the kernel cannot follow: the setjmp and
//    getcontext families save the return address they find, the trampoline,
//    and a later longjmp/setcontext jumps to it where the kernel has no
//    return pending (the program dies);
//  - the unwinder's entry points (_Unwind_RaiseException, ...: unwind_points.h),
//    which read their own return address to find their callers.
//
// Those get no probe at all: an entry probe alone would leave a call that
// never closes, which nests every later call of the thread under it in the
// reports. Probed as usual, because tests show they are safe: fork and vfork
// (each process returns with its own copy of the kernel's return records),
// longjmp, siglongjmp and setcontext (they never return; their calls and
// the frames they leave show as unfinished).
#pragma once

#include <string>

#include "uprobes/elf_symbols.h"

namespace atrace::uprobes {

struct ProbePolicy {
  bool entry = true;
  bool ret = true;
  // Why a probe is left out, one short phrase ("" when both are placed):
  // "non-entry fragment (.cold)", "not called (ELF entry point)", ...
  std::string reason;
};

// From the function's names (any alias) and where it lies in its file.
ProbePolicy probe_policy(const ElfFunction& f);

// True for GCC's split-off parts that are jumped into, not called:
// "f.cold", "f.cold.12", "f.constprop.0.cold" (mangled or demangled).
bool is_cold_fragment(const std::string& name);

}  // namespace atrace::uprobes
