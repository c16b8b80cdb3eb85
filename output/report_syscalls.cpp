// `atrace report --syscalls`: one row per system call and issuing function
// (the innermost traced function open when the call began), largest total
// time first, so the calls that cost most, and who made them, come first.
#include "output/report_table.h"
#include "output/report_text.h"

namespace atrace::analysis {

void print_syscalls(std::ostream& out, const ReportInput& in, const std::string& main) {
  const auto& rows = in.profile.syscalls;
  if (rows.empty()) {
    out << "No system calls recorded";
    if (!has_syscalls(in)) out << " (the trace has no syscalls kernel events)";
    out << ".\n";
    return;
  }
  // The system call's name is left-aligned, as is the function's.
  Table t({5});
  t.add({"Count", "Total", "Avg", "Max", "Errors", "Syscall", "Function"});
  for (const auto& r : rows)
    t.add({std::to_string(r.count), format_duration(r.total_ns), format_duration(r.avg_ns()),
           format_duration(r.max_ns), std::to_string(r.errors), r.name,
           display_name(in.profile.names, r.function, r.module, main)});
  t.print(out);
  out << "\nErrors: calls that returned an errno (-4095..-1). Calls that never returned\n"
         "(exit, exit_group) or were still running at the end are closed at the thread's\n"
         "exit or the end of the recording.\n";
}

}  // namespace atrace::analysis
