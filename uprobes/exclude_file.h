// Exclude files: the functions the relevance filters detached, written at
// the end of a recording (`OUTPUT.exclude`) as one selector a line, so that
// a later `atrace record --exclude=@OUTPUT.exclude` leaves exactly those
// functions out (the reading side is parse_selectors_with_files).
#pragma once

#include <string>
#include <vector>

#include "formats/trace_types.h"
#include "uprobes/error.h"

namespace atrace::uprobes {

class ExcludeFileError : public Error {
 public:
  using Error::Error;
};

// A selector that matches exactly the function of `p` (selector.h): its
// demangled name when it is in the main executable, "MODULE:NAME" (module
// by file name) otherwise; "re:^NAME$", regex-escaped, when the name as a
// glob would match more than itself or not survive the list syntax (glob
// characters, commas, a leading '#' or '@', ...). One limit is the selector
// syntax's: a name without a parameter list ("f", a C function) also
// matches a C++ function whose name without parameters is the same ("f(int)").
std::string exclude_selector(const formats::ProbeInfo& p, bool main_module);

// The text of an exclude file: `header` as '#' comment lines (one per line
// of it), then one selector a line, each function once. Probes whose
// module is `main_module` (the executable's file name) are named without it.
std::string exclude_file_text(const std::vector<formats::ProbeInfo>& probes,
                              const std::string& main_module, const std::string& header);

// Writes exclude_file_text to `path` (base/new_file.h: 0600, the sudo
// caller's, never through a link; an existing file replaced); throws
// ExcludeFileError with one line naming the file when it cannot be written.
void write_exclude_file(const std::string& path, const std::vector<formats::ProbeInfo>& probes,
                        const std::string& main_module, const std::string& header);

}  // namespace atrace::uprobes
