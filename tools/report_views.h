// The view options of `atrace report` (--tree, --depth, --min-pct,
// --callers, --callees, --diff; docs/views.md) and their dispatch: kept out
// of cmd_report.cpp so the command's own file stays about the profile.
#pragma once

#include <optional>
#include <string>

#include "formats/trace_reader.h"
#include "tools/cli.h"
#include "userspace/report.h"

namespace atrace::tools {

struct ReportViewArgs {
  bool tree = false;
  int depth = 0;
  double min_pct = 0;
  std::string callers, callees, diff;
};

// Adds the options to `report` (after its own, which some exclude).
void add_report_view_options(cli::Command report, ReportViewArgs& v);

// The view asked for, rendered from `reader` (the trace `in` was built from,
// named `input`) as text or JSON; nullopt when none was asked for. Bad
// arguments throw std::runtime_error with a line for the user.
std::optional<std::string> render_report_view(const ReportViewArgs& v, const std::string& input,
                                              fmt::TraceReader& reader,
                                              const analysis::ReportInput& in,
                                              const analysis::ReportOptions& opt, bool json);

}  // namespace atrace::tools
