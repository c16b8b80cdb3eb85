// `atrace report --html=FILE`: the option, and writing the page so that a
// failure never leaves a half-written file under FILE's name.
#include "tools/report_html_option.h"

#include <cstdio>

#include "base/diagnostics.h"
#include "base/new_file.h"
#include "output/output.h"

namespace atrace::tools {

void add_report_html_option(cli::Command report, std::string& path) {
  cli::Option html = report.option(
      "--html", path,
      "Write a self-contained HTML page to FILE ('-': stdout) instead of the table: the "
      "functions (sortable), a flame graph and a timeline of the threads (docs/report-html.md)");
  html.type_name("FILE");
  for (const char* other : {"--tree", "--callers", "--callees", "--diff", "--syscalls", "--format"})
    if (auto o = report.find(other)) html.excludes(*o);
}

bool write_report_html(const std::string& path, const std::string& data) {
  try {
    // Made like the trace (base/new_file.h): private, never through a link.
    NewFile file(path, IfExists::Replace);
    file.write(analysis::html_page(data));
    file.commit();
    return true;
  } catch (const NewFileError& e) {
    base::error("--html: %s", e.what());
    return false;
  }
}

}  // namespace atrace::tools
