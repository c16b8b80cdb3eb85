// `atrace script`: the call stack recorded at an entry (record --stack),
// printed after the entry's line as perf script prints a sample's: one
// frame a line, innermost first, address, function+offset and module.
//
//                   55d0c3a1b189 leaf+0x0 (target_stack)
//                   55d0c3a1b1d2 caller_a+0x12 (target_stack)
#pragma once

#include <string>
#include <vector>

#include "analysis/analysis.h"

namespace atrace::analysis {

void append_stack_lines(const std::vector<StackFrame>& frames, std::string& out);

}  // namespace atrace::analysis
