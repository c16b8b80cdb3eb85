// Where a program unwinds, walks or switches its stack, for safe return
// probes (bpf/unwind.bpf.c, docs/exceptions.md, docs/safety.md): the
// unwinder's entry points (in libgcc_s.so.1, or linked in statically), the
// `ret`s of its stack walk, the points where a C++ catch begins, the
// functions that switch stacks (swapcontext, setcontext), and programs
// whose stacks cannot be made safe at all (Go).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "uprobes/proc_maps.h"

namespace atrace::uprobes {

enum class UnwindRole {
  Start,    // an unwind starts or resumes: _Unwind_RaiseException, ...
  Walk,     // _Unwind_Backtrace: reads the callers, unwinds nothing
  WalkEnd,  // a `ret` of a Walk function: the walk is over
  Catch,    // a handler takes the exception: __cxa_begin_catch, ...
  Switch,   // the thread leaves its stack: swapcontext, setcontext
  // glibc's backtrace(), and a `ret` of it: it walks with the
  // _Unwind_Backtrace of a libgcc_s.so.1 it loads at its first call.
  // Nothing for the kernel path, whose probes on the files reach the loaded
  // unwinder; the fast path, which patches only what is mapped, takes them
  // as Walk and WalkEnd when no unwinder was mapped at its install
  // (docs/fast-path.md, "Unwinders").
  LateWalk,
  LateWalkEnd,
};

struct UnwindPoint {
  std::string path;     // module file
  std::string name;     // symbol
  uint64_t offset = 0;  // file offset of the probe (WalkEnd: of the `ret`)
  uint64_t entry = 0;   // file offset of the function's first instruction
  UnwindRole role = UnwindRole::Start;
  // WalkEnd, LateWalkEnd: the file offset of the shortest run of whole instructions
  // that ends with this `ret` and is at least 5 bytes long, where the fast
  // path's jump to its walk-end hook goes (docs/fast-path.md,
  // "Unwinders"); 0 when no such run is safe to replace (code of the module
  // can enter it past its first byte, or the code does not decode).
  uint64_t window = 0;
};

// The role of a function by its (mangled) symbol name, if it has one
// (never WalkEnd, which is a place inside a Walk function). The Start and
// Walk functions read their own return address to find their callers:
// they must never get a return probe (reads_own_return_address).
bool unwind_role(const std::string& symbol, UnwindRole* role = nullptr);
inline bool reads_own_return_address(UnwindRole r) {
  return r == UnwindRole::Start || r == UnwindRole::Walk;
}

// File offsets of the `ret` instructions of the code at `offset`, `size`
// bytes long (Zydis). Empty when the code cannot be read or decoded.
std::vector<uint64_t> return_offsets(const std::string& path, uint64_t offset, uint64_t size);

// The start (an index into `code`) of the shortest run of whole
// instructions of `code` that ends with the instruction at `ret` and is at
// least `bytes` long; SIZE_MAX when `code` does not decode up to `ret`, or
// `ret` is not an instruction's start.
size_t window_before(const uint8_t* code, size_t len, size_t ret, size_t bytes);

// A point's probe goes on the cheapest instruction of the function's prefix
// (uprobes/placement.h: `endbr64`, single-stepped, is skipped for the
// emulated `push %rbp` after it), where the stack is still as at the entry:
// it costs every throw 3 to 4 probe hits. A function atrace also probes
// keeps the point at `entry` (the guard's program and atrace's then run on
// one hit, in the order they always had): record/unwind_guard.cpp.
//
// Every unwind point of the modules, plus those of the system's
// libgcc_s.so.1 when no module is one: glibc loads it only when a thread
// is cancelled, calls pthread_exit or backtrace(). Each Walk function also
// gives a WalkEnd point per `ret`. Modules that cannot be read are
// skipped.
std::vector<UnwindPoint> find_unwind_points(const std::vector<Module>& modules);

// True for a Go program (a .go.buildinfo or .note.go.buildid section):
// goroutine stacks are copied to grow, which moves return addresses away
// from where the kernel's return probes look for them.
bool is_go_program(const std::string& path);

}  // namespace atrace::uprobes
