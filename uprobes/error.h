// The probe-site layer's one error type: a module, selector, process or
// file that cannot give probe sites, said in one line. The kinds below
// (ElfError, SelectorError, ProcessError, ExcludeFileError) derive from it,
// so that a caller catches one type unless it does something different
// for one kind.
#pragma once

#include <stdexcept>

namespace atrace::uprobes {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace atrace::uprobes
