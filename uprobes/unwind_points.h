// Where a program unwinds its stack, for exception-safe return probes
// (bpf/unwind.bpf.c, docs/exceptions.md): the unwinder's entry points (in
// libgcc_s.so.1, or linked in statically), the points where a C++ catch
// begins, and programs whose stacks cannot be made safe at all (Go).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "uprobes/proc_maps.h"

namespace atrace::uprobes {

enum class UnwindRole {
  Start,  // an unwind starts or resumes: _Unwind_RaiseException, ...
  Walk,   // _Unwind_Backtrace: reads the callers, unwinds nothing
  Catch,  // a handler takes the exception: __cxa_begin_catch, ...
};

struct UnwindPoint {
  std::string path;     // module file
  std::string name;     // symbol
  uint64_t offset = 0;  // file offset of its entry
  UnwindRole role = UnwindRole::Start;
};

// The role of a function by its (mangled) symbol name, if it has one. The
// Start and Walk functions read their own return address to find their
// callers: they must never get a return probe.
bool unwind_role(const std::string& symbol, UnwindRole* role = nullptr);

// Every unwind point of the modules, plus those of the system's
// libgcc_s.so.1 when no module is one: glibc loads it only when a thread
// is cancelled or calls pthread_exit. Modules that cannot be read are
// skipped.
std::vector<UnwindPoint> find_unwind_points(const std::vector<Module>& modules);

// True for a Go program (a .go.buildinfo or .note.go.buildid section):
// goroutine stacks are copied to grow, which moves return addresses away
// from where the kernel's return probes look for them.
bool is_go_program(const std::string& path);

}  // namespace atrace::uprobes
