// C++ names as people write them.
#pragma once

#include <string>

namespace atrace::uprobes {

// Itanium demangling (abi::__cxa_demangle); the input unchanged when it is
// not a mangled name.
std::string demangle(const std::string& symbol);

// "int ns::add<int>(int, int) const" -> "ns::add<int>"; "main" -> "main".
std::string base_name(const std::string& demangled);

}  // namespace atrace::uprobes
