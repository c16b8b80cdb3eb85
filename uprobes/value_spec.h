// What `record --args` and `--retval` ask for: which functions, which of
// their argument registers (x86-64 SysV: arg1..arg6 = rdi, rsi, rdx, rcx,
// r8, r9) or their return value (rax), and how to read each
// (docs/arguments.md).
//
//   --args='SELECTORS@arg1/s,arg2/i32;SELECTORS@arg3'
//   --retval='SELECTORS[/TYPE];...'
//
// SELECTORS@auto takes the parameters, their names and types from each
// function's debug information instead (uprobes/dwarf_params.h).
//
// TYPE: i8 i16 i32 i64 (signed), u8..u64 (unsigned), x8..x64 (hex), p (a
// pointer, hex), s (a C string read from the process); i, u, x are the
// 64-bit ones. Without a type: i64. SELECTORS is a --select list.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "formats/trace_types.h"
#include "uprobes/error.h"
#include "uprobes/selector.h"

namespace atrace::uprobes {

class ValueSpecError : public Error {
 public:
  using Error::Error;
};

constexpr unsigned kMaxStringArgs = 2;  // string arguments per function (bpf/atrace.h)

struct ValueType {
  uint8_t size = 8;  // bytes of the register kept: 1, 2, 4, 8
  bool is_signed = true;
  bool is_string = false;
  formats::ArgFormat format = formats::ArgFormat::Decimal;
};

struct ArgSpec {
  uint8_t slot = 1;  // 1..formats::kMaxFuncArgs
  ValueType type;
  std::string name;  // the parameter's name (FUNC@auto: dwarf_params.h); "" otherwise
};

// What to record for the functions a selector list names.
struct ValueRule {
  std::string text;  // as the user wrote it, for messages
  std::vector<Selector> selectors;
  std::vector<ArgSpec> args;  // in the order given
  bool auto_args = false;     // SELECTORS@auto: args from each function's debug info
  bool has_retval = false;
  ValueType retval;
};

// A function's merged spec (its --args and its --retval).
struct FuncValues {
  std::vector<ArgSpec> args;
  bool has_retval = false;
  ValueType retval;
  bool any() const { return !args.empty() || has_retval; }
};

// Each throws ValueSpecError with one line naming the bad item.
ValueType parse_value_type(const std::string& text, const std::string& context);
std::vector<ValueRule> parse_arg_rules(const std::string& list);
std::vector<ValueRule> parse_retval_rules(const std::string& list);

}  // namespace atrace::uprobes
