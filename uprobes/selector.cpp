// Parsing selector lists and matching them against modules and names.
// Globs use fnmatch(3) without FNM_PATHNAME, so '*' also crosses "::" and '/'.
#include "uprobes/selector.h"

#include "uprobes/process_root.h"

#include <fnmatch.h>
#include <re2/re2.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <utility>

#include "base/diagnostics.h"
#include "base/name_scan.h"
#include "uprobes/demangle.h"
#include "uprobes/process_root.h"

namespace atrace::uprobes {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool is_open(char c) { return c == '<' || c == '(' || c == '[' || c == '{'; }
bool is_close(char c) { return c == '>' || c == ')' || c == ']' || c == '}'; }

// Splits at commas outside brackets; operator names ("operator<",
// "operator,") are opaque tokens.
std::vector<std::string_view> split_list(std::string_view list) {
  std::vector<std::string_view> items;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < list.size();) {
    size_t after_op = base::detail::skip_operator(list, i);
    if (after_op != std::string_view::npos) {
      i = after_op;
      continue;
    }
    char c = list[i];
    if (is_open(c)) {
      ++depth;
    } else if (is_close(c)) {
      if (depth > 0) --depth;
    } else if (c == ',' && depth == 0) {
      items.push_back(list.substr(start, i - start));
      start = i + 1;
    }
    ++i;
  }
  items.push_back(list.substr(start));
  return items;
}

// Position of the MODULE:PATTERN separator: the first ':' that is not half
// of "::"; npos when there is none.
size_t module_separator(std::string_view s) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != ':') continue;
    if (i + 1 < s.size() && s[i + 1] == ':') {
      ++i;  // skip the pair
      continue;
    }
    return i;
  }
  return std::string_view::npos;
}

bool starts_with_re(std::string_view s) { return s.substr(0, 3) == "re:"; }

// What an absolute path without glob characters names, links resolved.
std::string module_file_of(const Selector& sel) {
  char buf[PATH_MAX];
  if (sel.module_is_path() && !sel.module_is_glob() && ::realpath(sel.module_glob.c_str(), buf))
    return buf;
  return "";
}

[[noreturn]] void bad(std::string_view text, const std::string& why) {
  throw SelectorError("bad selector '" + std::string(text) + "': " + why);
}

// What a selector is, for the errors that say what was expected instead.
constexpr const char* kForms = "FUNC, MODULE:FUNC or re:REGEX, comma-separated";

// A glob's '[' or '(' that nothing closes: fnmatch would take it as a
// literal character no function name has, and the selector would match
// nothing without saying why. Operator names ("operator[]", "operator(")
// are opaque.
void check_brackets(std::string_view text, std::string_view pattern) {
  const size_t at = text.size() - pattern.size() + 1;  // the pattern ends the text
  int parens = 0;
  for (size_t i = 0; i < pattern.size();) {
    if (size_t after = base::detail::skip_operator(pattern, i); after != std::string_view::npos) {
      i = after;
      continue;
    }
    const char c = pattern[i];
    if (c == '[' && pattern.find(']', i + 1) == std::string_view::npos)
      bad(text, "'[' at " + std::to_string(at + i) +
                    " opens a set of characters that no ']' closes (a glob: *, ?, [abc])");
    if (c == '(') ++parens;
    if (c == ')' && --parens < 0)
      bad(text, "')' at " + std::to_string(at + i) + " closes no '(' (a parameter list: f(int))");
    ++i;
  }
  if (parens > 0) bad(text, "a '(' that no ')' closes (a parameter list: f(int))");
}

Selector parse_one(std::string_view text) {
  Selector sel;
  sel.text = std::string(text);
  if (text.empty()) bad(text, std::string("empty selector (expected ") + kForms + ")");

  std::string_view rest = text;
  if (!starts_with_re(rest)) {
    size_t sep = module_separator(rest);
    if (sep != std::string_view::npos) {
      sel.module_glob = std::string(trim(rest.substr(0, sep)));
      rest = trim(rest.substr(sep + 1));
      if (sel.module_glob.empty())
        bad(text, "empty module before ':' (expected MODULE:FUNC, e.g. libc.so.6:malloc)");
      sel.module_file = module_file_of(sel);
    }
  }
  if (starts_with_re(rest)) {
    sel.is_regex = true;
    rest = rest.substr(3);
  }
  sel.pattern = std::string(rest);
  if (sel.pattern.empty())
    bad(text, sel.is_regex ? "empty regular expression after 're:' (expected re:REGEX, e.g. "
                             "re:^parse_)"
                           : "empty function pattern after ':' (expected MODULE:FUNC, e.g. "
                             "libc.so.6:malloc)");
  if (sel.is_regex) {
    RE2::Options o;
    o.set_log_errors(false);
    auto re = std::make_shared<const RE2>(sel.pattern, o);
    if (!re->ok()) bad(text, re->error() + " (re:REGEX takes RE2's syntax)");
    sel.regex = std::move(re);
  } else {
    check_brackets(text, sel.pattern);
  }
  return sel;
}

bool glob(const std::string& pattern, const std::string& s) {
  return fnmatch(pattern.c_str(), s.c_str(), 0) == 0;
}

}  // namespace

bool Selector::matches_module(const std::string& file_name, const std::string& path,
                              bool is_main) const {
  if (module_glob.empty()) return is_main;
  // A module of a process in a container matches by the path the process
  // knows it by as well as by the one atrace reaches it by.
  const std::string seen = seen_path(path);
  return glob(module_glob, file_name) || glob(module_glob, path) || glob(module_glob, seen) ||
         (!module_file.empty() && (path == module_file || seen == module_file));
}

Selector Selector::of_module(std::string noun, std::string text, std::string module_glob) {
  Selector sel;
  sel.noun = std::move(noun);
  sel.text = std::move(text);
  sel.module_glob = std::move(module_glob);
  sel.module_file = module_file_of(sel);
  return sel;
}

bool Selector::module_is_glob() const {
  return module_glob.find_first_of("*?[") != std::string::npos;
}

bool Selector::matches_name(const std::string& demangled) const {
  return matches_name(demangled, base_name(demangled), base::short_name(demangled));
}

bool Selector::matches_name(const std::string& demangled, const std::string& base,
                            const std::string& short_form) const {
  if (is_regex)
    return RE2::PartialMatch(demangled, *regex) || RE2::PartialMatch(base, *regex) ||
           RE2::PartialMatch(short_form, *regex);
  return glob(pattern, demangled) || glob(pattern, base) || glob(pattern, short_form);
}

std::vector<Selector> parse_selectors(const std::string& list) {
  std::vector<Selector> out;
  for (std::string_view item : split_list(list)) out.push_back(parse_one(trim(item)));
  return out;
}

namespace {

// The selectors of one "@FILE". Each line is parsed on its own, so a line
// with unbalanced brackets cannot swallow the next ones.
void read_selector_file(const std::string& file, std::vector<Selector>& out) {
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec))  // would read as empty, silently
    throw SelectorError("cannot read selector file '" + file + "': Is a directory");
  std::ifstream in(file);
  if (!in)
    throw SelectorError("cannot read selector file '" + file + "': " + base::errno_text(errno));
  std::string line;
  for (size_t n = 1; std::getline(in, line); ++n) {
    std::string_view text = trim(line);
    while (!text.empty() && text.back() == '\r') text = trim(text.substr(0, text.size() - 1));
    if (text.empty() || text.front() == '#') continue;
    std::string where = file + ":" + std::to_string(n) + ": ";
    for (std::string_view item : split_list(text)) {
      item = trim(item);
      if (!item.empty() && item.front() == '@')
        throw SelectorError(where + "'" + std::string(item) +
                            "': a selector file cannot name another");
      try {
        out.push_back(parse_one(item));
      } catch (const SelectorError& e) {  // kept: adds the file and line
        throw SelectorError(where + e.what());
      }
    }
  }
  if (in.bad())
    throw SelectorError("cannot read selector file '" + file + "': " + base::errno_text(errno));
}

}  // namespace

std::vector<Selector> parse_selectors_with_files(const std::string& list) {
  std::vector<Selector> out;
  for (std::string_view item : split_list(list)) {
    item = trim(item);
    if (item.empty() || item.front() != '@') {
      out.push_back(parse_one(item));
      continue;
    }
    std::string file(trim(item.substr(1)));
    if (file.empty()) bad(item, "no file name after '@'");
    read_selector_file(file, out);
  }
  return out;
}

}  // namespace atrace::uprobes
