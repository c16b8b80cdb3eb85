// `atrace report --html=FILE` (docs/report-html.md): the option and the
// writing of the page, kept out of cmd_report.cpp as the other views are
// (tools/report_view_options.h). The page itself is output/report_html.h.
#pragma once

#include <string>

#include "tools/cli.h"

namespace atrace::tools {

// Adds --html to `report` (after the view options, which it excludes).
void add_report_html_option(cli::Command report, std::string& path);

// Writes the page of `data` (analysis::HtmlViews::data, built before: an
// unreadable trace leaves no file behind) to `path` ("-": stdout). The
// file is made by base/new_file.h's rule: 0600, the sudo caller's, a link,
// device or FIFO refused; it appears whole or not at all (written unnamed,
// then named, replacing an older page). Returns false after printing one
// error line.
bool write_report_html(const std::string& path, const std::string& data);

}  // namespace atrace::tools
