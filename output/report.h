// The `atrace report` renderings of a Profile: a text table for people and
// a JSON document for programs (a stable interface, docs/report-json.md).
// Both take the same inputs so they always say the same thing.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/analysis.h"
#include "formats/trace_types.h"

namespace atrace::analysis {

// A column of the text report's function table (--fields).
enum class Field {
  Calls,
  Total,
  Self,
  Avg,
  Min,
  Max,
  Offcpu,
  SelfOffcpu,
  SysTime,
  SelfSysTime,
  Syscalls,
  Faults
};
// "calls", "total", "self", "avg", "min", "max", "offcpu", "selfoff",
// "systime", "selfsys", "syscalls", "faults" (the names --sort takes).
std::optional<Field> parse_field(std::string_view s);
// The names parse_field takes, ", "-separated (for messages and completion).
std::string field_names();

struct ReportOptions {
  SortKey sort = SortKey::Total;
  std::vector<SortKey> then_sort;  // --sort=a,b,c: the keys after the first
  // --fields: the columns before the function's name; empty: calls, total,
  // self, avg, min, max, then off-CPU, system calls and faults for the
  // kernel groups the trace recorded.
  std::vector<Field> fields;
  bool threads = false;   // also per-thread rows
  bool syscalls = false;  // text: the system calls table instead of functions
  // The profile was built with probe costs taken out (--compensate): the
  // report states the per-hit costs used (the header's).
  bool compensated = false;
  // --long-names: full demangled names instead of short ones (set on the
  // profile's and views' FunctionNames; function_names.h).
  bool long_names = false;
  // --color: the function table's column names in bold (text only).
  bool color = false;
};

// "compensated: 1.23 us per nop5 call (0.9 us inside it), ..." and a line
// saying what that means (the header's probe costs): what a compensated
// report took out; then how many calls it clamped at 0, if any.
std::string compensation_line(const formats::TraceHeader& h, const CompensationResidual& r);

// Everything a report says: the recording's header, its profile and the
// reader's warnings about the file.
struct ReportInput {
  const formats::TraceHeader& header;
  const Profile& profile;
  const std::vector<std::string>& warnings;
  // --group-by: the calls grouped by a recorded value (value_groups.h).
  const ValueGroups* groups = nullptr;
  // The trace's process table (TraceReader::processes): what the user
  // knows each process by. nullptr or empty: none (older files).
  const std::vector<formats::ProcessInfo>* processes = nullptr;
  // The entry of process `pid`; nullptr when the table has none.
  const formats::ProcessInfo* process(uint32_t pid, uint16_t host = 0) const;
  // A merged trace's host labels (host_labels, process_text.h), by
  // Event::host; empty for a single recording: no host is shown.
  std::vector<std::string> hosts = {};
  // The entries of the processes the report is about: the traced program
  // and those with threads in the profile (a --pid filter leaves out the
  // others), by pid.
  std::vector<const formats::ProcessInfo*> shown_processes() const;
};

// "812 ns", "20.1 ms", "1.52 s": three significant digits.
std::string format_duration(uint64_t ns);

// True when the trace recorded kernel events (header.kernel_events): the
// text report then shows the kernel columns, and only then.
bool has_kernel_events(const formats::TraceHeader& h);
// True when it recorded the syscalls group, or has system calls anyway.
bool has_syscalls(const ReportInput& in);
// True when it recorded the net group (record --kernel=+net), or has
// messages anyway.
bool has_messages(const ReportInput& in);

std::string render_text(const ReportInput& in, const ReportOptions& opt);
// render_text's text written to `out` as it is made: with --threads, a
// table per thread, never all of them at once.
void write_text(const ReportInput& in, const ReportOptions& opt, std::ostream& out);
// The function table alone, as render_text prints it (the column names,
// then at most `max_rows` rows, 0: all): `atrace top`'s screen.
std::string render_function_table(const ReportInput& in, const ReportOptions& opt,
                                  size_t max_rows = 0);
std::string render_json(const ReportInput& in, const ReportOptions& opt);
// render_json's text handed to `sink` in pieces as it is made (about 1 MiB
// each): `report --threads --format=json` of many threads and functions
// writes gigabytes, and holds neither its document nor its text whole.
void write_json(const ReportInput& in, const ReportOptions& opt,
                const std::function<void(std::string_view)>& sink);

}  // namespace atrace::analysis
