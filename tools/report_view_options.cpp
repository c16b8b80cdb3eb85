// `atrace report`'s view options: parsing and choosing the view. The
// renderings are in output/report_{tree,callers,diff}.cpp.
#include "tools/report_view_options.h"

#include <cstdio>
#include <memory>
#include <stdexcept>

#include "analysis/analysis.h"
#include "base/diagnostics.h"
#include "output/output.h"
#include "tools/frame_symbols.h"

namespace atrace::tools {

void add_report_view_options(cli::Command report, ReportViewArgs& v) {
  cli::Option tree = report.flag(
      "--tree", v.tree,
      "The call tree: one line per call path (a function under two callers is two lines) with "
      "calls, total, share and self time; per thread with --threads");
  report.option("--depth", v.depth, "--tree: show this many levels of calls")
      .at_least(1)
      .needs(tree);
  report
      .option("--min-pct", v.min_pct,
              "--tree: hide call paths under this percentage of the time in traced calls")
      .range(0.0, 100.0)
      .needs(tree);
  cli::Option callers = report.option("--callers", v.callers,
                                      "Who calls FUNC: calls, total and self time per caller");
  cli::Option callees = report.option("--callees", v.callees,
                                      "What FUNC calls: calls, total and self time per callee");
  cli::Option diff = report.option(
      "--diff", v.diff,
      "Compare with trace OTHER: calls, total and self time of each function in both, with the "
      "change, largest first (by --sort: calls, self, otherwise total)");
  cli::Option flows =
      report
          .option("--flows", v.flows,
                  "Who hands data to whom: values (record --args/--retval), messages "
                  "(--kernel=+net) and wake-ups between traced calls, per function, thread, "
                  "process, module or host, and the cheapest split in two (docs/flows.md)")
          .value_optional("function")
          .type_name("LEVEL")
          .one_of({"function", "thread", "process", "module", "host"});
  callers.type_name("FUNC");
  callees.type_name("FUNC");
  diff.type_name("OTHER");
  tree.excludes(callers).excludes(callees).excludes(diff).excludes(flows);
  flows.excludes(callers).excludes(callees).excludes(diff);
  diff.excludes(callers).excludes(callees);
  if (auto syscalls = report.find("--syscalls"))
    for (cli::Option o : {tree, callers, callees, diff, flows}) o.excludes(*syscalls);
}

ReportView::ReportView(const ReportViewArgs& v, analysis::CallReplay& replay,
                       const formats::TraceReader& reader, const analysis::ReportOptions& opt)
    : v_(v), replay_(&replay) {
  if (!v.flows.empty()) {
    flows_ = std::make_unique<analysis::FlowCollector>(replay, reader.hosts(),
                                                       reader.header().kernel_events);
    return;
  }
  if (!v.diff.empty() || (!v.tree && v.callers.empty() && v.callees.empty())) return;
  analysis::CallTreeOptions t;
  t.per_thread = v.tree && opt.threads;
  t.long_names = opt.long_names;
  tree_.emplace(replay, reader.header(), reader.probes(), t);
  // The callers call stacks name (record --stack): the module files are
  // read only for the callers of a function that has stacks.
  if (!v.callers.empty())
    stacks_ =
        std::make_unique<analysis::StackCallers>(replay, reader.probes(), trace_frames(reader));
}

std::optional<std::string> ReportView::render(const std::string& input,
                                              const formats::TraceReader& reader,
                                              const analysis::ReportInput& in,
                                              const analysis::ReportOptions& opt, bool json) {
  if (flows_) {
    const analysis::FlowView view =
        analysis::flow_view(flows_->result(), *analysis::parse_flow_level(v_.flows),
                            analysis::flow_naming(reader.header(), reader.probes(), *replay_,
                                                  reader.hosts(), opt.long_names));
    return json ? analysis::render_flows_json(in, opt, view)
                : analysis::render_flows_text(in, view);
  }
  if (!v_.diff.empty()) {
    std::unique_ptr<formats::TraceReader> other_reader;
    try {
      other_reader = std::make_unique<formats::TraceReader>(v_.diff);
      if (v_.filter.any()) other_reader->select(v_.filter);
    } catch (const formats::Error& e) {  // kept: says it is the --diff trace
      throw std::runtime_error("--diff: " + std::string(e.what()));
    }
    formats::TraceReader& other = *other_reader;
    analysis::Profile p = analysis::build_profile(other, opt.compensated, opt.long_names);
    for (const auto& w : other.warnings()) base::warning("%s: %s", v_.diff.c_str(), w.c_str());
    analysis::ReportInput other_in{other.header(), p, other.warnings()};
    analysis::DiffInput d{in, input, other_in, v_.diff};
    return json ? analysis::render_diff_json(d, opt) : analysis::render_diff_text(d, opt);
  }
  if (!tree_) return std::nullopt;

  analysis::CallTree tree = tree_->result(reader.threads());
  if (v_.tree) {
    analysis::TreeView view{v_.depth, v_.min_pct};
    return json ? analysis::render_tree_json(in, opt, tree, view)
                : analysis::render_tree_text(in, tree, view);
  }
  return json ? analysis::render_callers_json(in, opt, tree, v_.callers, v_.callees, stacks_.get())
              : analysis::render_callers_text(in, tree, v_.callers, v_.callees, stacks_.get());
}

}  // namespace atrace::tools
