// `atrace report`'s view options: parsing and choosing the view. The
// renderings are in userspace/report_{tree,callers,diff}.cpp.
#include "tools/report_views.h"

#include <cstdio>
#include <memory>
#include <stdexcept>

#include "userspace/call_tree.h"
#include "userspace/report_views.h"

namespace atrace::tools {

void add_report_view_options(cli::Command report, ReportViewArgs& v) {
  cli::Option tree = report.flag(
      "--tree", v.tree,
      "The call tree: one line per call path (a function under two callers is two lines) with "
      "calls, total, share and self time; per thread with --threads");
  report.option("--depth", v.depth, "--tree: show this many levels of calls")
      .positive()
      .needs(tree);
  report.option("--min-pct", v.min_pct,
                "--tree: hide call paths under this percentage of the time in traced calls")
      .range(0.0, 100.0)
      .needs(tree);
  cli::Option callers = report.option(
      "--callers", v.callers, "Who calls FUNC: calls, total and self time per caller");
  cli::Option callees =
      report.option("--callees", v.callees, "What FUNC calls: calls, total and self time per callee");
  cli::Option diff = report.option(
      "--diff", v.diff,
      "Compare with trace OTHER: calls, total and self time of each function in both, with the "
      "change, largest first (by --sort: calls, self, otherwise total)");
  callers.type_name("FUNC");
  callees.type_name("FUNC");
  diff.type_name("OTHER");
  tree.excludes(callers).excludes(callees).excludes(diff);
  diff.excludes(callers).excludes(callees);
  if (auto syscalls = report.find("--syscalls"))
    for (cli::Option o : {tree, callers, callees, diff}) o.excludes(*syscalls);
}

std::optional<std::string> render_report_view(const ReportViewArgs& v, const std::string& input,
                                              fmt::TraceReader& reader,
                                              const analysis::ReportInput& in,
                                              const analysis::ReportOptions& opt, bool json) {
  if (!v.diff.empty()) {
    std::unique_ptr<fmt::TraceReader> other_reader;
    try {
      other_reader = std::make_unique<fmt::TraceReader>(v.diff);
    } catch (const fmt::TraceError& e) {
      throw std::runtime_error("--diff: " + std::string(e.what()));
    }
    fmt::TraceReader& other = *other_reader;
    analysis::Profile p = analysis::build_profile(other, opt.compensated);
    for (const auto& w : other.warnings())
      std::fprintf(stderr, "atrace: warning: %s: %s\n", v.diff.c_str(), w.c_str());
    analysis::ReportInput other_in{other.header(), p, other.warnings()};
    analysis::DiffInput d{in, input, other_in, v.diff};
    return json ? analysis::render_diff_json(d, opt) : analysis::render_diff_text(d, opt);
  }
  if (!v.tree && v.callers.empty() && v.callees.empty()) return std::nullopt;

  analysis::CallTreeOptions t;
  t.per_thread = v.tree && opt.threads;
  if (opt.compensated) t.compensate = analysis::probe_costs(reader.header());
  analysis::CallTree tree = analysis::build_call_tree(reader, t);
  if (v.tree) {
    analysis::TreeView view{v.depth, v.min_pct};
    return json ? analysis::render_tree_json(in, opt, tree, view)
                : analysis::render_tree_text(in, tree, view);
  }
  return json ? analysis::render_callers_json(in, opt, tree, v.callers, v.callees)
              : analysis::render_callers_text(in, tree, v.callers, v.callees);
}

}  // namespace atrace::tools
