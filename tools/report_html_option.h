// `atrace report --html=FILE` (docs/report-html.md): the option and the
// writing of the page, kept out of cmd_report.cpp as the other views are
// (tools/report_views.h). The page itself is userspace/report_html.h.
#pragma once

#include <string>

#include "formats/trace_reader.h"
#include "tools/cli.h"
#include "userspace/report.h"

namespace atrace::tools {

// Adds --html to `report` (after the view options, which it excludes).
void add_report_html_option(cli::Command report, std::string& path);

// Writes the page for the trace `reader` holds (`in` was built from it) to
// `path` ("-": stdout). The file appears whole or not at all: the page is
// written to a temporary file beside it and renamed over it. Returns false
// after printing one error line; a trace that cannot be read throws
// fmt::TraceError (nothing is written then).
bool write_report_html(const std::string& path, fmt::TraceReader& reader,
                       const analysis::ReportInput& in, const analysis::ReportOptions& opt);

}  // namespace atrace::tools
