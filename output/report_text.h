// Pieces shared by the text renderings (report_text.cpp: functions and
// threads; report_syscalls.cpp: the --syscalls table).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "analysis/analysis.h"
#include "output/report.h"

namespace atrace::analysis {

// The --syscalls table, or a line saying why there is none.
void print_syscalls(std::ostream& out, const ReportInput& in, const std::string& main);
// The messages table (record --kernel=+net), or a line saying none.
void print_messages(std::ostream& out, const ReportInput& in, const std::string& main);

// What a Calls cell adds for calls with no duration, by reason: `untimed`
// of them, `switched` of those at a stack switch, `given_back` of those
// given back to a stack walk (the fast path), the rest past the
// kernel's nesting limit ("" when none).
std::string untimed_counts(uint64_t untimed, uint64_t switched, uint64_t given_back);

}  // namespace atrace::analysis
