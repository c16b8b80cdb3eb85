// Pieces shared by the text renderings (report_text.cpp: functions and
// threads; report_syscalls.cpp: the --syscalls table).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "analysis/analysis.h"
#include "output/report.h"

namespace atrace::analysis {

// The --syscalls table, or a line saying why there is none.
void print_syscalls(std::ostream& out, const ReportInput& in, const std::string& main);

}  // namespace atrace::analysis
