// Writing exclude files. A selector is written as a plain name whenever
// that parses back to exactly this name (the readable case, by far the
// common one); otherwise as an anchored, escaped regex. The plain form is
// checked by parsing it, not by a list of characters kept in step with
// selector.cpp by hand.
#include "uprobes/exclude_file.h"

#include <set>
#include <string_view>

#include "base/new_file.h"
#include "uprobes/selector.h"

namespace atrace::uprobes {

namespace {

bool is_control(char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }

void append_hex_escape(std::string& out, char c) {
  static const char kHex[] = "0123456789abcdef";
  auto u = static_cast<unsigned char>(c);
  out += "\\x";
  out += kHex[u >> 4];
  out += kHex[u & 15];
}

// Regex specials (RE2, also ECMAScript) get a backslash. Commas and control characters are
// written as \xHH: a comma would split the list, a newline the file.
std::string regex_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == ',' || is_control(c)) {
      append_hex_escape(out, c);
    } else {
      if (std::string_view("^$\\.*+?()[]{}|").find(c) != std::string_view::npos) out += '\\';
      out += c;
    }
  }
  return out;
}

// A module file name as a glob matching only itself (fnmatch(3): '\' quotes
// the next character). A comma goes in a bracket expression, inside which
// the list splitter does not split; so do a leading '#' (a comment line)
// and '@' (a file).
std::string module_glob(std::string_view module) {
  std::string out;
  for (size_t i = 0; i < module.size(); ++i) {
    char c = module[i];
    if (c == ',' || (i == 0 && (c == '#' || c == '@'))) {
      out += '[';
      out += c;
      out += ']';
    } else {
      if (c == '*' || c == '?' || c == '[' || c == '\\') out += '\\';
      out += c;
    }
  }
  return out;
}

// Whether `text` reads back as one plain glob selector for exactly `name`.
bool reads_back_as(const std::string& text, const std::string& name, const std::string& glob) {
  // Glob characters would match other names; a line starting with '#' is a
  // comment, an item starting with '@' a file.
  if (name.find_first_of("*?[\\") != std::string::npos) return false;
  for (char c : name)
    if (is_control(c)) return false;
  if (text.empty() || text.front() == '#' || text.front() == '@') return false;
  try {
    auto sel = parse_selectors(text);
    return sel.size() == 1 && !sel[0].is_regex && sel[0].pattern == name &&
           sel[0].module_glob == glob;
  } catch (const SelectorError&) {
    return false;
  }
}

}  // namespace

std::string exclude_selector(const formats::ProbeInfo& p, bool main_module) {
  if (p.name.empty()) return "";
  // The module glob as parse_selectors will give it back (it trims blanks).
  std::string glob = main_module || p.module.empty() ? "" : module_glob(p.module);
  std::string prefix = glob.empty() ? "" : glob + ":";
  std::string plain = prefix + p.name;
  if (reads_back_as(plain, p.name, glob)) return plain;
  return prefix + "re:^" + regex_escape(p.name) + "$";
}

std::string exclude_file_text(const std::vector<formats::ProbeInfo>& probes,
                              const std::string& main_module, const std::string& header) {
  std::string out;
  size_t start = 0;
  while (start < header.size()) {
    size_t nl = header.find('\n', start);
    std::string_view line =
        std::string_view(header).substr(start, nl == std::string::npos ? nl : nl - start);
    out += line.empty() ? "#" : "# ";
    out += line;
    out += '\n';
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  std::set<std::string> seen;  // a function probed twice is listed once
  for (const auto& p : probes) {
    std::string sel = exclude_selector(p, p.module == main_module);
    if (sel.empty() || !seen.insert(sel).second) continue;
    out += sel;
    out += '\n';
  }
  return out;
}

void write_exclude_file(const std::string& path, const std::vector<formats::ProbeInfo>& probes,
                        const std::string& main_module, const std::string& header) {
  try {
    // Made like the trace (base/new_file.h): private, never through a link.
    NewFile file(path, IfExists::Replace);
    file.write(exclude_file_text(probes, main_module, header));
    file.commit();
  } catch (const NewFileError& e) {
    throw ExcludeFileError(std::string("cannot write exclude file: ") + e.what());
  }
}

}  // namespace atrace::uprobes
