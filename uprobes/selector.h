// Selectors: which functions to probe.
//
//   GLOB           demangled names in the main executable ("main", "ns::Class::*")
//   MODULE:GLOB    names in a shared library chosen by file name or path glob
//                  ("libz.so*:deflate*", "/opt/x/libfoo.so:f"); "::" in C++
//                  names is not a separator
//   re:REGEX       RE2 regex (linear time, no recursion: any symbol length is
//                  safe) over demangled names in the main executable
//   MODULE:re:REGEX
//   @FILE          (parse_selectors_with_files) the selectors in FILE
// A list is comma-separated; commas inside <>, (), [] or {} belong to the
// name, spaces around items are ignored. Globs are fnmatch(3) patterns.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "uprobes/error.h"

namespace re2 {
class RE2;
}

namespace atrace::uprobes {

class SelectorError : public Error {
 public:
  using Error::Error;
};

// A valid selector that the modules of this program do not match: another
// program might (the one a shell script or a wrapper execs, which launch
// mode follows: record/exec_follow.h).
class NoMatchError : public SelectorError {
 public:
  using SelectorError::SelectorError;
};

struct Selector {
  std::string text;               // as the user wrote it, for messages
  std::string noun = "selector";  // what the user wrote, for messages ("USDT spec")
  std::string module_glob;        // empty: the main executable
  // module_glob is an absolute path without glob characters: the file it
  // names with symbolic links resolved ("" when it does not exist), which
  // is how the kernel shows a mapping.
  std::string module_file;
  bool is_regex = false;
  std::string pattern;                    // glob or regex source
  std::shared_ptr<const re2::RE2> regex;  // compiled when is_regex

  // A selector of the module part only, for what else names a module the
  // way a selector does (a USDT spec): the same matching, the same search
  // for modules not loaded yet (uprobes/late_modules.h).
  static Selector of_module(std::string noun, std::string text, std::string module_glob);
  // "selector 'libfoo.so:f'": how messages name it.
  std::string named() const { return noun + " '" + text + "'"; }
  // file_name is the basename ("libc.so.6"), path the full path.
  bool matches_module(const std::string& file_name, const std::string& path, bool is_main) const;
  // module_glob is a path or a path glob (starts with '/'), not a file name.
  bool module_is_path() const { return !module_glob.empty() && module_glob.front() == '/'; }
  // module_glob has glob characters.
  bool module_is_glob() const;
  // Matches the full demangled name ("ns::f<int>(int)"), the name without
  // its parameter list and return type ("ns::f<int>") or its short name,
  // without template arguments too ("ns::f": base/symbol_name.h).
  bool matches_name(const std::string& demangled) const;
  // Same, with base_name and short_name of demangled already computed
  // (resolving many symbols).
  bool matches_name(const std::string& demangled, const std::string& base,
                    const std::string& short_form) const;
};

// Throws SelectorError naming the bad selector (empty, bad regex), e.g.
// "bad selector 're:(': <regex error>". An empty list is an empty selector.
std::vector<Selector> parse_selectors(const std::string& list);

// parse_selectors, where an item "@FILE" stands for the selectors FILE
// holds (`--exclude=@prog.exclude,foo*`): one list a line, usually one
// selector; blank lines and lines starting with '#' are ignored. The file
// names cannot contain commas. Throws SelectorError with one line naming the
// file when it cannot be read, and FILE:LINE for a bad selector in it.
std::vector<Selector> parse_selectors_with_files(const std::string& list);

}  // namespace atrace::uprobes
