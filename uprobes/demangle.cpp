// Demangling through libiberty (Debian's libiberty-dev), the demangler of
// binutils and GDB: the one well-kept library that reads C++ and both Rust
// manglings. Its rust_demangle drops legacy symbols' "::h<16 hex>" hash
// (rustc's own demangler does the same without {:#}) and v0 symbols' crate
// disambiguators; LLVM's ".llvm.NNN" suffixes are dropped with them.
#include "uprobes/demangle.h"

#include <cstdlib>
#include <memory>

// libiberty.h (included by demangle.h) declares C functions that glibc's
// headers also declare; only this file sees it.
#include <libiberty/demangle.h>

namespace atrace::uprobes {

namespace {

std::string take(char* s) {
  std::unique_ptr<char, decltype(&std::free)> owned(s, &std::free);
  return owned ? std::string(owned.get()) : std::string();
}

// GCC names a translation unit's static constructors and destructors
// _GLOBAL__sub_I_<key> and _GLOBAL__sub_D_<key>, the key being the unit's
// first function's mangled name or its file name; libiberty reads only the
// older _GLOBAL__I_<key> form, as "global constructors keyed to <key>".
// Both are said that way here, the key demangled.
std::string static_init(const std::string& symbol) {
  for (const char* prefix : {"_GLOBAL__sub_", "_GLOBAL__"}) {
    const std::string p = prefix;
    if (symbol.size() <= p.size() + 2 || symbol.compare(0, p.size(), p) != 0) continue;
    const char kind = symbol[p.size()];
    if ((kind != 'I' && kind != 'D') || symbol[p.size() + 1] != '_') continue;
    const std::string key = symbol.substr(p.size() + 2);
    return std::string(kind == 'I' ? "global constructors" : "global destructors") + " keyed to " +
           demangle(key);
  }
  return {};
}

}  // namespace

std::string demangle(const std::string& symbol) {
  if (symbol.compare(0, 9, "_GLOBAL__") == 0) {
    std::string init = static_init(symbol);
    if (!init.empty()) return init;
  }
  // Mangled names start with _Z (C++, Rust legacy) or _R (Rust v0); asking
  // only about those keeps a C name such as "foo__bar" from being read as
  // another language's mangling.
  if (symbol.size() < 3 || symbol[0] != '_' || (symbol[1] != 'Z' && symbol[1] != 'R'))
    return symbol;
  constexpr int kShow = DMGL_PARAMS | DMGL_ANSI;
  // Rust first: a legacy Rust symbol is also a valid Itanium name, which
  // would keep its hash as a last path element.
  std::string out = take(cplus_demangle(symbol.c_str(), kShow | DMGL_RUST));
  if (out.empty() && symbol[1] == 'Z')
    out = take(cplus_demangle(symbol.c_str(), kShow | DMGL_GNU_V3));
  return out.empty() ? symbol : out;
}

}  // namespace atrace::uprobes
