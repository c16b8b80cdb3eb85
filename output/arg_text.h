// A recorded function argument or return value as text (record --args /
// --retval), the one spelling `script` and the exporters share:
//   42  -2  0x7ffd1234 (hex, pointers)  "a\x00b\"c"  "long..."... (cut)
//   NULL (string pointer 0)  <unreadable 0x1234> (string not readable)
// Quoted strings escape control bytes, bytes >= 0x80 (not always UTF-8),
// '"' and '\', so one value never breaks a line or a quoted field.
#pragma once

#include <string>
#include <vector>

#include "analysis/analysis.h"
#include "formats/trace_types.h"

namespace atrace::analysis {

void append_arg_value(std::string& out, const formats::ProbeArg& a);
// "arg2" for argument 2; "retval" for the return value.
std::string arg_name(const formats::ProbeArg& a);
// "arg1=5 arg2=\"/a\" retval=-2": a call's values on one line (CSV, the
// HTML timeline).
std::string values_text(const std::vector<formats::ProbeArg>& args);
// The values as the timeline exporters' arguments (Chrome args, Perfetto
// debug annotations), keyed by arg_name: signed decimals as Int, unsigned
// as Uint, hex and pointers as Hex (the bits the type keeps), a string as
// its text, or as append_arg_value spells it when it is not whole (NULL,
// <unreadable 0x...>, a cut one).
void append_value_args(std::vector<InstantArg>& out, const std::vector<formats::ProbeArg>& args);
// Its name from the probe table (ProbeInfo::arg_names) when it has one.
std::string arg_name(const formats::ProbeArg& a, const std::vector<std::string>& names);

}  // namespace atrace::analysis
