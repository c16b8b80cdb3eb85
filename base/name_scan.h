// Shared by symbol_name.cpp and uprobes/selector.cpp: C++ operator names
// ("operator<", "operator()", "operator,") contain bracket and comma
// characters that must not count when scanning names for brackets.
#pragma once

#include <cstddef>
#include <string_view>

namespace atrace::base::detail {

inline bool is_ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '$';
}

// If the keyword "operator" starts at i, the index just past the operator's
// symbol ("<<=", "()", "[]", "->*", ","; nothing for "operator new" or a
// conversion operator, whose words are ordinary text); otherwise npos.
inline size_t skip_operator(std::string_view s, size_t i) {
  constexpr std::string_view kw = "operator";
  if (s.substr(i, kw.size()) != kw) return std::string_view::npos;
  if (i > 0 && is_ident_char(s[i - 1])) return std::string_view::npos;
  size_t j = i + kw.size();
  if (j < s.size() && is_ident_char(s[j])) return std::string_view::npos;
  // Longest operator token first, so "operator<," is "<" followed by a comma
  // while "operator," is the comma operator.
  static constexpr std::string_view tokens[] = {
      "<<=", ">>=", "<=>", "->*", "()", "[]", "<<", ">>", "<=", ">=", "==", "!=", "&&",
      "||",  "++",  "--",  "+=",  "-=", "*=", "/=", "%=", "^=", "&=", "|=", "->", "+",
      "-",   "*",   "/",   "%",   "^",  "&",  "|",  "~",  "!",  "=",  "<",  ">",  ","};
  for (std::string_view t : tokens)
    if (s.substr(j, t.size()) == t) return j + t.size();
  return j;
}

}  // namespace atrace::base::detail
