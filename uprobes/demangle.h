// Symbol names as people write them, in every language a native program is
// commonly written in: C++ (Itanium ABI) and Rust (legacy and v0 mangling).
#pragma once

#include <string>

#include "base/symbol_name.h"

namespace atrace::uprobes {

// libiberty's demangler: "_ZN2ns3addIiEET_S1_S1_" -> "int ns::add<int>(int,
// int)", "_ZN1r4shop6Widget7compute17h2a4fa939b9b17e5dE" ->
// "r::shop::Widget::compute" (the legacy hash dropped),
// "_RNvMNtCsi7GFBnvyxwE_1r4shopNtB2_6Widget7compute" ->
// "<r::shop::Widget>::compute". The input unchanged when it is not a
// mangled name.
std::string demangle(const std::string& symbol);

// The form selectors also match (base/symbol_name.h).
using base::base_name;

}  // namespace atrace::uprobes
