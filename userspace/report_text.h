// Pieces shared by the text renderings (report_text.cpp: functions and
// threads; report_syscalls.cpp: the --syscalls table).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "userspace/report.h"

namespace atrace::analysis {

// The traced program's own module, whose functions are shown without a
// module tag.
std::string main_module(const fmt::TraceHeader& h, const Profile& p);
// The same from the modules of a trace's probes (one entry per probe or
// function): the executable named in the command if some are in it,
// otherwise the module named most often.
std::string main_module(const fmt::TraceHeader& h, const std::vector<std::string>& modules);
// "name", or "name [module]" outside the main module.
std::string display_name(const std::string& name, const std::string& module,
                         const std::string& main);
// The --syscalls table, or a line saying why there is none.
void print_syscalls(std::ostream& out, const ReportInput& in, const std::string& main);

}  // namespace atrace::analysis
