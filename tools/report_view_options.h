// The view options of `atrace report` (--tree, --depth, --min-pct,
// --callers, --callees, --diff, --flows; docs/views.md, docs/flows.md) and their dispatch: kept out
// of cmd_report.cpp so the command's own file stays about the profile.
// The views built from the trace's calls listen to the same call replay
// as the profile (call_replay.h): the report reads the trace once.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "analysis/analysis.h"
#include "formats/event_filter.h"
#include "formats/trace_reader.h"
#include "output/output.h"
#include "tools/cli.h"

namespace atrace::tools {

struct ReportViewArgs {
  bool tree = false;
  int depth = 0;
  double min_pct = 0;
  std::string callers, callees, diff;
  std::string flows;  // --flows[=LEVEL]: "" when not asked
  // The report's read filters: --diff reads OTHER through them too.
  formats::EventFilter filter;
};

// Adds the options to `report` (after its own, which some exclude).
void add_report_view_options(cli::Command report, ReportViewArgs& v);

// The view asked for: made before the replay reads the trace (listening
// to it), rendered after.
class ReportView {
 public:
  ReportView(const ReportViewArgs& v, analysis::CallReplay& replay,
             const formats::TraceReader& reader, const analysis::ReportOptions& opt);
  // After the replay's finish(): the view rendered from the trace `in` was
  // built from (named `input`) as text or JSON; nullopt when none was asked
  // for. Bad arguments throw std::runtime_error with a line for the user.
  // Call once.
  std::optional<std::string> render(const std::string& input, const formats::TraceReader& reader,
                                    const analysis::ReportInput& in,
                                    const analysis::ReportOptions& opt, bool json);

 private:
  ReportViewArgs v_;
  std::optional<analysis::CallTreeBuilder> tree_;   // --tree, --callers, --callees
  std::unique_ptr<analysis::StackCallers> stacks_;  // --callers: from call stacks
  std::unique_ptr<analysis::FlowCollector> flows_;  // --flows
  analysis::CallReplay* replay_ = nullptr;
};

}  // namespace atrace::tools
