// The code a patched function jumps to (docs/fast-path.md, "Trampolines"),
// generated into a byte buffer that will live at a given address in the
// target: atrace writes the bytes there (fastpath/inject/), or a test runs
// them in its own process (fastpath/local_patch.h).
//
// A code region holds, from its start, the shared code
// (trampoline_template.cpp: the entry recorder, the unwinder hook, the
// return stub and the ring's addresses), then one trampoline per patched
// function:
//
//   push $function_id
//   call entry            (or the unwinder hook, for _Unwind_RaiseException & co)
//   lea 8(%rsp),%rsp      (drops the id; flags untouched)
//   <the function's first instructions, relocated (relocate.h)>
//   jmp function+replaced
//
// A walk's end (WalkEnd: the last instructions of _Unwind_Backtrace, up to
// and with a `ret`) is patched the same way, but mid-function, where the
// stack below rsp and the flags may still be live:
//
//   lea -128(%rsp),%rsp   (steps over a red zone)
//   pushfq
//   push $6; call the unwinder hook; lea 8(%rsp),%rsp
//   popfq
//   lea 128(%rsp),%rsp
//   <the instructions up to the ret, relocated, the ret last>
//
// and the function's first bytes become `jmp rel32` to it: the region must be
// within rel32 reach (+-2 GiB) of every function it serves, hence one region
// per module. All regions of a process share one ring and one return stub:
// give every region after the first the first one's return_stub(), so that
// the unwinder hook of any region recognises every hooked frame.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fastpath/relocate.h"
#include "fastpath/ring_layout.h"

namespace atrace::fastpath {

// What a trampoline does before the function's own code (docs/fast-path.md,
// "Unwinders"). Every kind but Traced calls the template's unwinder hook,
// with the kind's value as its mode where a traced function's id would be.
enum class TrampolineKind {
  Traced = 0,        // records Entry (hooks the return) or EntryNoExit
  Unwinder = 1,      // an unwind starts or resumes: disarms the frames it can walk
  Walk = 2,          // a stack walk (_Unwind_Backtrace): disarms them too, unwinds nothing
  ForcedUnwind = 3,  // pthread_exit, cancellation: the frames it can walk end with the thread
  Catch = 4,         // a handler takes the exception: re-arms the live frames, drops the rest
  Switch = 5,        // swapcontext, setcontext: every frame of the thread is given back
  WalkEnd = 6,       // a `ret` of the stack walk: re-arms the live frames it disarmed
};

// Why a function may not be patched whatever its code: functions that
// return twice (setjmp, vfork, getcontext...) would return through the stub
// a second time after their frame was popped. Empty when the name is fine.
std::string name_refusal(std::string_view name);

// The most of a function's code read to relocate its entry: the whole
// function up to this size (its own branches into the entry are then
// checked), only its first bytes beyond (the module-wide check still
// applies), and kEntryCodeUnsized bytes of a function of unknown size.
inline constexpr size_t kMaxEntryCode = 64 * 1024;
inline constexpr size_t kEntryCodeUnsized = 32;

// Why the function `name`, whose code is code[0, len) at link-time address
// `vaddr` (`whole`: all of it, as for relocate_entry) in a module whose code
// entries are `entries`, cannot take the fast path: what `atrace list
// --fast-path` says (fastpath/site_verdict.h). Empty when it can. (Whether a
// RIP-relative operand stays in reach depends on where the code region
// lands; that is only known when patching.)
std::string fast_path_refusal(std::string_view name, const uint8_t* code, size_t len,
                              uint64_t vaddr, const uprobes::CodeEntries& entries,
                              bool whole = true);

// The unwinder entry points that get the Unwinder kind: each reads return
// addresses from the stack (libgcc's and LLVM libunwind's _Unwind_* API).
bool is_unwinder_entry(std::string_view name);

// The kind of trampoline the function `name` gets when it is an unwinder
// entry point, a catch or a stack switch (uprobes/unwind_points.h's names);
// Traced for any other.
TrampolineKind unwinder_kind(std::string_view name);

// How a record reads the time and the CPU (its lane). rdtscp is everywhere
// x86-64 Linux runs; `rdtsc; rdpid` gives the same values and costs half as
// much where the CPU has RDPID (this VM, quiet: rdtscp 18 ns, rdtsc 9.6 ns,
// rdpid 0.6 ns). Neither orders the read against the function's own
// instructions, which does not matter at a few nanoseconds; a migration
// between rdtsc and rdpid only picks another lane, which the
// compare-and-swap makes safe.
enum class TscRead { Rdtscp, RdtscRdpid };

// RdtscRdpid when this CPU has RDPID (CPUID.7.0:ECX bit 22), else Rdtscp.
// atrace and the traced process run on the same CPUs.
TscRead best_tsc_read();

struct PatchPlan {
  uint64_t trampoline = 0;                 // its address in the target
  size_t replaced = 0;                     // bytes of the function's entry it replaces
  std::array<uint8_t, kJumpBytes> jump{};  // what to write at the function's address
  std::string refusal;                     // why not; empty when planned
  bool ok() const { return refusal.empty(); }
};

class CodeRegion {
 public:
  // `buf[0, size)` is the region's content, to be mapped at `address` in the
  // target; the ring of `layout` is at `ring_address`. Writes the shared code.
  // `shared_stub`: the return stub of the process's first region (0: this is
  // the first, its own stub is used).
  CodeRegion(uint8_t* buf, size_t size, uint64_t address, const RingHeader& layout,
             uint64_t ring_address, uint64_t shared_stub = 0, TscRead tsc = best_tsc_read());

  // The address every hooked frame returns to (atrace's undo restores the
  // original return address wherever a stack slot holds it).
  uint64_t return_stub() const { return stub_; }
  uint64_t address() const { return address_; }
  size_t used() const { return used_; }  // bytes of buf to copy into the target

  // The next trampoline starts at `offset` at least (a page boundary: the
  // pages a kernel probe will be on apart from the template's, which is
  // written later: RemoteRegion, "--fast-path=hot").
  void skip_to(size_t offset) { used_ = std::max(used_, std::min(offset, size_)); }

  // Generates the trampoline of the function at `function` (code[0, len),
  // `whole` as for relocate_entry). A refusal leaves the region unchanged.
  PatchPlan add(const uint8_t* code, size_t len, uint64_t function, uint32_t function_id,
                TrampolineKind kind = TrampolineKind::Traced, bool whole = true);

 private:
  uint8_t* buf_;
  size_t size_;
  uint64_t address_;
  uint64_t stub_ = 0;
  uint64_t entry_ = 0;
  uint64_t unwind_ = 0;
  size_t used_ = 0;
};

}  // namespace atrace::fastpath
