// The per-function probe rules of probe_policy.h, by name and place.
#include "uprobes/probe_policy.h"

#include <fnmatch.h>

#include <string_view>

#include "uprobes/unwind_points.h"

namespace atrace::uprobes {

namespace {

struct NamedRule {
  const char* glob;  // fnmatch pattern over a symbol name
  const char* reason;
};

// glibc's names (and their internal aliases) of functions whose return the
// kernel cannot follow or that are never called. Patterns, so that internal
// variants (__sigsetjmp_cancel) go too. Decided with uretprobes on each
// (bpftrace and atrace, tests/integration/test_safety.cpp): the program dies
// with one on _setjmp, __sigsetjmp, getcontext or swapcontext; it runs
// unchanged with one on vfork (the kernel gives the child a copy of the
// parent's return records), longjmp, siglongjmp, __longjmp_chk and
// setcontext (never return: their calls show as unfinished).
constexpr NamedRule kRules[] = {
    {"setjmp", "returns twice (setjmp family)"},
    {"_setjmp", "returns twice (setjmp family)"},
    {"sigsetjmp", "returns twice (setjmp family)"},
    {"__sigsetjmp*", "returns twice (setjmp family)"},
    {"savectx", "returns twice (setjmp family)"},
    {"getcontext", "returns twice (getcontext family)"},
    {"__getcontext", "returns twice (getcontext family)"},
    {"swapcontext", "returns twice (getcontext family)"},
    {"__swapcontext", "returns twice (getcontext family)"},
    {"__start_context", "not called (makecontext's return path)"},
    {"__restore_rt", "not called (signal-return trampoline)"},
    {"_dl_runtime_resolve*", "not called (dynamic-linker resolver stub)"},
    {"_dl_runtime_profile*", "not called (dynamic-linker resolver stub)"},
};

const char* rule_for(const std::string& name) {
  for (const auto& r : kRules)
    if (fnmatch(r.glob, name.c_str(), 0) == 0) return r.reason;
  // The unwinder's entry points read their own return address to find
  // their callers: with the trampoline there, every exception would stop.
  UnwindRole role;
  if (unwind_role(name, &role) && reads_own_return_address(role))
    return "reads its own return address (unwinder entry point)";
  return nullptr;
}

}  // namespace

bool is_cold_fragment(const std::string& name) {
  // Demangled C++: "f(int) [clone .cold]"; C and mangled: dot-separated
  // clone suffixes after the name, one of them "cold".
  if (name.find("[clone .cold") != std::string::npos) return true;
  std::string_view s(name);
  size_t dot = s.find('.');
  while (dot != std::string_view::npos) {
    size_t next = s.find('.', dot + 1);
    std::string_view part =
        s.substr(dot + 1, next == std::string_view::npos ? next : next - dot - 1);
    if (part == "cold") return true;
    dot = next;
  }
  return false;
}

ProbePolicy probe_policy(const ElfFunction& f) {
  auto none = [](std::string why) { return ProbePolicy{false, false, std::move(why)}; };
  if (is_cold_fragment(f.mangled) || is_cold_fragment(f.demangled))
    return none("non-entry fragment (.cold): jumped into, not called");
  if (f.entry_point) return none("not called (ELF entry point)");
  if (f.in_plt) return none("not called (PLT stub)");
  if (const char* why = rule_for(f.demangled)) return none(why);
  for (const auto& a : f.aliases)
    if (const char* why = rule_for(a)) return none(why);
  return {};
}

}  // namespace atrace::uprobes
