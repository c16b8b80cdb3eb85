// Pieces shared by the text renderings (report_text.cpp: functions and
// threads; report_syscalls.cpp: the --syscalls table).
#pragma once

#include <ostream>
#include <string>

#include "userspace/report.h"

namespace atrace::analysis {

// The traced program's own module, whose functions are shown without a
// module tag.
std::string main_module(const fmt::TraceHeader& h, const Profile& p);
// "name", or "name [module]" outside the main module.
std::string display_name(const std::string& name, const std::string& module,
                         const std::string& main);
// The --syscalls table, or a line saying why there is none.
void print_syscalls(std::ostream& out, const ReportInput& in, const std::string& main);

}  // namespace atrace::analysis
