// Demangling, and the short form of a demangled name that selectors match
// ("ns::add<int>" for "int ns::add<int>(int, int) const"). The short form is
// found by scanning brackets, with operator names (operator<, operator(),
// operator new ...) treated as opaque tokens so their symbols do not count.
#include "uprobes/demangle.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>
#include <string_view>

#include "uprobes/name_scan.h"

namespace atrace::uprobes {

std::string demangle(const std::string& symbol) {
  if (symbol.size() < 2 || symbol[0] != '_' || symbol[1] != 'Z') return symbol;
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> out(
      abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status), &std::free);
  if (status != 0 || !out) return symbol;
  return out.get();
}

namespace {

using detail::is_ident_char;
using detail::skip_operator;

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Removes " [clone .cold]" style suffixes and trailing cv/ref/noexcept
// qualifiers of a member function. Returns true if what is left ends with the
// closing parenthesis of a parameter list.
bool strip_trailers(std::string_view* s) {
  for (bool changed = true; changed;) {
    changed = false;
    while (!s->empty() && s->back() == ' ') s->remove_suffix(1);
    if (ends_with(*s, "]")) {
      size_t open = s->rfind(" [clone ");
      if (open != std::string_view::npos) {
        *s = s->substr(0, open);
        changed = true;
        continue;
      }
    }
    for (std::string_view q : {"const", "volatile", "noexcept", "&&", "&"}) {
      if (!ends_with(*s, q)) continue;
      std::string_view rest = s->substr(0, s->size() - q.size());
      // A qualifier follows ')' or a space ("f() const", "f() &"), never an
      // identifier character (that would be a name ending in "const").
      if (rest.empty() || is_ident_char(rest.back()) || (q[0] == '&' && rest.back() == '&'))
        continue;
      *s = rest;
      changed = true;
      break;
    }
  }
  return !s->empty() && s->back() == ')';
}

// Index of the '(' that opens the final parameter list ending at s.back().
size_t param_list_start(std::string_view s) {
  int depth = 0;
  for (size_t i = s.size(); i-- > 0;) {
    if (s[i] == ')') {
      ++depth;
    } else if (s[i] == '(') {
      if (--depth == 0) return i;
    }
  }
  return std::string_view::npos;
}

// Start of the qualified name once a leading return type is dropped: just
// past the last space at bracket depth 0 before the operator keyword (if any).
size_t name_start(std::string_view s) {
  int depth = 0;
  size_t last_space = std::string_view::npos;
  for (size_t i = 0; i < s.size();) {
    size_t after_op = skip_operator(s, i);
    if (after_op != std::string_view::npos) {
      // Everything from here on belongs to the operator's name.
      if (depth == 0) break;
      i = after_op;
      continue;
    }
    char c = s[i];
    if (c == '<' || c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if (c == '>' || c == ')' || c == ']' || c == '}') {
      if (depth > 0) --depth;
    } else if (c == ' ' && depth == 0) {
      last_space = i;
    }
    ++i;
  }
  return last_space == std::string_view::npos ? 0 : last_space + 1;
}

}  // namespace

std::string base_name(const std::string& demangled) {
  std::string_view s = demangled;
  // Thunks and clones keep their prefix: they are distinct functions.
  for (std::string_view prefix : {"non-virtual thunk to ", "virtual thunk to ",
                                  "covariant return thunk to ", "transaction clone for "}) {
    if (s.substr(0, prefix.size()) == prefix)
      return std::string(prefix) + base_name(std::string(s.substr(prefix.size())));
  }
  std::string_view body = s;
  if (!strip_trailers(&body)) return std::string(s);
  size_t open = param_list_start(body);
  if (open == std::string_view::npos || open == 0) return std::string(s);
  body = body.substr(0, open);
  return std::string(body.substr(name_start(body)));
}

}  // namespace atrace::uprobes
