// Forms of demangled names. Names are scanned for brackets, with operator
// names (operator<, operator(), operator new ...) treated as opaque tokens
// so their symbols do not count, and lambda or closure names ("{lambda(int)#1}",
// "{closure#0}") kept whole: they are how the demangler names those.
#include "base/symbol_name.h"

#include <fnmatch.h>

#include <map>
#include <set>

#include "base/name_scan.h"

namespace atrace::base {

namespace {

using detail::is_ident_char;
using detail::skip_operator;

// Prefixes that make other code of a function (and GCC's static
// constructors keyed to one, uprobes/demangle.cpp): kept in every form.
constexpr std::string_view kThunks[] = {
    "non-virtual thunk to ",         "virtual thunk to ",
    "covariant return thunk to ",    "transaction clone for ",
    "global constructors keyed to ", "global destructors keyed to "};

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
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

// The thunk prefix `s` starts with, or "".
std::string_view thunk_prefix(std::string_view s) {
  for (std::string_view p : kThunks)
    if (starts_with(s, p)) return p;
  return {};
}

// Where the parameter list of `s` (trailers included) starts, and where its
// name starts: npos when `s` has no parameter list (a C name, a Rust path).
struct Split {
  size_t name = 0;
  size_t params = std::string_view::npos;
};
Split split(std::string_view s) {
  std::string_view body = s;
  if (!strip_trailers(&body)) return {};
  size_t open = param_list_start(body);
  if (open == std::string_view::npos || open == 0) return {};
  return {name_start(body.substr(0, open)), open};
}

// Index just past the bracket group opened at s[i] ('<', '(', '[' or
// '{'), operators inside skipped; s.size() when it is not closed.
size_t skip_group(std::string_view s, size_t i) {
  int depth = 0;
  for (size_t j = i; j < s.size();) {
    size_t after_op = skip_operator(s, j);
    if (after_op != std::string_view::npos) {
      j = after_op;
      continue;
    }
    char c = s[j];
    if (c == '<' || c == '(' || c == '[' || c == '{') ++depth;
    if ((c == '>' || c == ')' || c == ']' || c == '}') && --depth == 0) return j + 1;
    ++j;
  }
  return s.size();
}

std::string strip_qualified(std::string_view name);

// A Rust qualified path "<T as Trait>" or "<T>" at the start of a path:
// "<short(T) as short(Trait)>", or for an inherent impl short(T) bare.
std::string rust_qualified(std::string_view inside) {
  int depth = 0;
  for (size_t i = 0; i + 4 <= inside.size(); ++i) {
    char c = inside[i];
    if (c == '<' || c == '(' || c == '[') ++depth;
    if (c == '>' || c == ')' || c == ']') --depth;
    if (depth == 0 && inside.substr(i, 4) == " as ")
      return "<" + strip_qualified(inside.substr(0, i)) + " as " +
             strip_qualified(inside.substr(i + 4)) + ">";
  }
  return strip_qualified(inside);
}

// A qualified name (no return type, no final parameter list) without its
// template or generic arguments, ABI tags, and the parameter lists of the
// functions that enclose a local entity ("f(int)::{lambda()#1}").
std::string strip_qualified(std::string_view name) {
  std::string out;
  for (size_t i = 0; i < name.size();) {
    size_t after_op = skip_operator(name, i);
    if (after_op != std::string_view::npos) {
      out.append(name.substr(i, after_op - i));
      i = after_op;
      // "operator< <int>": the operator's own template arguments follow a
      // space ("operator char const*" is a conversion's type: kept).
      if (name.substr(i, 2) == " <") ++i;
      continue;
    }
    char c = name[i];
    const bool path_start = out.empty() || ends_with(out, "::");
    if (c == '<' && path_start && (i == 0 || !ends_with(name.substr(0, i), "::"))) {
      // Rust: "<T as Trait>::f" or "<T>::f".
      size_t end = skip_group(name, i);
      const bool closed = end >= i + 2 && name[end - 1] == '>';
      out += rust_qualified(name.substr(i + 1, closed ? end - i - 2 : std::string_view::npos));
      i = end;
    } else if (c == '<') {
      // Template arguments, or Rust generic arguments ("f::<u8>": the
      // "::" goes with them).
      if (ends_with(out, "::")) out.resize(out.size() - 2);
      i = skip_group(name, i);
    } else if (c == '[' && name.substr(i, 5) == "[abi:") {
      i = skip_group(name, i);
    } else if (c == '(' && !path_start) {
      // The parameters of an enclosing function: "f(int)::{lambda...}".
      i = skip_group(name, i);
      while (i < name.size() && name[i] == ' ') ++i;  // " const::"
      for (std::string_view q : {"const", "volatile", "&&", "&"})
        if (name.substr(i, q.size()) == q) i += q.size();
    } else if (c == '{' || c == '(') {
      // "{lambda(int)#1}", "{closure#0}", "(anonymous namespace)": kept.
      size_t end = skip_group(name, i);
      out.append(name.substr(i, end - i));
      i = end;
    } else {
      out += c;
      ++i;
    }
  }
  return out;
}

}  // namespace

std::string base_name(std::string_view s) {
  // Thunks and clones keep their prefix: they are distinct functions.
  std::string_view prefix = thunk_prefix(s);
  if (!prefix.empty()) return std::string(prefix) + base_name(s.substr(prefix.size()));
  Split sp = split(s);
  if (sp.params == std::string_view::npos) return std::string(s);
  return std::string(s.substr(sp.name, sp.params - sp.name));
}

std::string without_return_type(std::string_view s) {
  std::string_view prefix = thunk_prefix(s);
  if (!prefix.empty()) return std::string(prefix) + without_return_type(s.substr(prefix.size()));
  return std::string(s.substr(split(s).name));
}

std::string short_name(std::string_view s) {
  std::string_view prefix = thunk_prefix(s);
  if (!prefix.empty()) return std::string(prefix) + short_name(s.substr(prefix.size()));
  std::string shortened = strip_qualified(base_name(s));
  return shortened.empty() ? std::string(s) : shortened;
}

namespace {

// short_name with the parameter list (and what follows it) kept.
std::string short_with_params(std::string_view s) {
  std::string_view prefix = thunk_prefix(s);
  if (!prefix.empty()) return std::string(prefix) + short_with_params(s.substr(prefix.size()));
  Split sp = split(s);
  if (sp.params == std::string_view::npos) return short_name(s);
  return strip_qualified(s.substr(sp.name, sp.params - sp.name)) + std::string(s.substr(sp.params));
}

}  // namespace

std::vector<std::string> distinguishing_names(const std::vector<std::string>& names) {
  // Each level's form of each distinct name, and which names share it.
  using Form = std::string (*)(std::string_view);
  static constexpr Form kLevels[] = {short_name, [](std::string_view s) { return base_name(s); },
                                     short_with_params, without_return_type,
                                     [](std::string_view s) { return std::string(s); }};
  std::set<std::string_view> distinct(names.begin(), names.end());
  std::map<std::string_view, std::vector<std::string>> forms;
  std::vector<std::map<std::string, size_t>> sharing(std::size(kLevels));
  for (std::string_view n : distinct) {
    auto& f = forms[n];
    for (size_t l = 0; l < std::size(kLevels); ++l) {
      f.push_back(kLevels[l](n));
      sharing[l][f.back()]++;
    }
  }
  std::map<std::string_view, std::string> chosen;
  for (const auto& [n, f] : forms) {
    std::string best(n);
    for (size_t l = 0; l < f.size(); ++l)
      if (sharing[l][f[l]] == 1 && f[l].size() < best.size()) best = f[l];
    chosen[n] = best;
  }
  std::vector<std::string> out;
  out.reserve(names.size());
  for (const auto& n : names) out.push_back(chosen[n]);
  return out;
}

bool glob_names(const std::string& glob, const std::string& demangled) {
  auto match = [&](const std::string& form) { return fnmatch(glob.c_str(), form.c_str(), 0) == 0; };
  return match(demangled) || match(base_name(demangled)) || match(short_name(demangled));
}

}  // namespace atrace::base
