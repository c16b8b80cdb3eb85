// The forms of a demangled function name, and the one rule that shortens
// names for people: selectors (uprobes/) match these forms, and every view
// (analysis/, output/) shows the shortest one that still tells the trace's
// functions apart. Pure string work on what uprobes/demangle.h produced,
// C++ (Itanium) and Rust (legacy and v0) alike.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace atrace::base {

// Without the return type, parameter list, cv/ref qualifiers and " [clone
// .cold]" suffixes; templates kept: "int ns::add<int>(int, int) const" ->
// "ns::add<int>"; "main" -> "main".
std::string base_name(std::string_view demangled);

// The short name: namespaces and classes kept; return type, parameter
// lists, template and generic arguments and ABI tags dropped:
//   "std::vector<int>::push_back(int const&)"   -> "std::vector::push_back"
//   "bool ns::operator< <int>(X<int> const&, ..)" -> "ns::operator<"
//   "ns::f(int)::{lambda(int)#1}::operator()(int) const"
//                                               -> "ns::f::{lambda(int)#1}::operator()"
//   "ns::name[abi:cxx11](int)"                  -> "ns::name"
//   "<r::shop::Widget>::compute"                 -> "r::shop::Widget::compute" (Rust)
//   "<&str as core::fmt::Debug>::fmt"            -> kept (Rust trait impl)
//   "core::ptr::drop_in_place::<alloc::Vec<u8>>" -> "core::ptr::drop_in_place"
// Thunk prefixes ("non-virtual thunk to ") are kept: they are other code.
std::string short_name(std::string_view demangled);

// The demangled name without its return type (templates, parameters and
// qualifiers kept): "int ns::add<int>(int, int) const" -> "ns::add<int>(int,
// int) const".
std::string without_return_type(std::string_view demangled);

// For each of `names` (demangled names of distinct functions, among which
// any two must be told apart), the shortest of its forms that no other
// different name shares at the same level: short_name, then with templates
// (base_name), with parameters (short name + parameter list), without
// return type, then the full name. Equal inputs get equal outputs.
std::vector<std::string> distinguishing_names(const std::vector<std::string>& names);

// Whether a user's glob (fnmatch(3), '*' crossing "::") names the function
// `demangled`: it matches the full name, base_name or short_name. The one
// rule for the name arguments of the analysis commands (--callers,
// --function, ...); selectors (uprobes/selector.h) match the same forms.
bool glob_names(const std::string& glob, const std::string& demangled);

}  // namespace atrace::base
