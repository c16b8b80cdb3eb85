// `record --args=FUNC@auto`: a function's parameters, named and typed from
// its debug information (libdw), as the argument specs an explicit
// `FUNC@arg1/TYPE,...` gives (value_spec.h), with the parameters' names.
//
// x86-64 SysV: the integer class parameters (integers of 1 to 8 bytes,
// bool, enums, pointers, references) take rdi, rsi, rdx, rcx, r8, r9 in
// order. char* (any qualifiers) becomes a string (at most kMaxStringArgs;
// further ones stay pointers), other pointers hex, integers their width
// and sign. Parameters in XMM registers (float, double) or on the stack
// (long double, large structs, the seventh integer parameter on) are left
// out, each with a note; after a small struct passed by value in
// registers, which registers the next ones take is not followed: those are
// left out too. A struct returned in memory takes rdi first.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "uprobes/value_spec.h"

namespace atrace::uprobes {

struct DwarfParams {
  std::vector<ArgSpec> args;       // each with its name
  std::vector<std::string> notes;  // "ratio (double): in an XMM register, left out"
};

// The parameters of the function at ELF address `address` of the module
// at `path` (its build id, for a separate debug file under
// /usr/lib/debug/.build-id). nullopt: no debug information describes it.
std::optional<DwarfParams> dwarf_params(const std::string& path, const std::string& build_id,
                                        uint64_t address);

}  // namespace atrace::uprobes
