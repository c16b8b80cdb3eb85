// The other views of `atrace report` (docs/views.md), next to the
// per-function table of report.h:
//
//   --tree      the call tree (call_tree.h), pruned by depth and share
//   --callers   who calls a function, with how many calls and what time
//   --callees   what a function calls
//   --diff      two traces' per-function profiles side by side
//   --flows     who hands values, bytes and wake-ups to whom (flow_view.h)
//
// Each renders as text or JSON; the JSON forms are the report's document
// plus a member (`tree`, `callers`, `callees`), or for --diff a document of
// its own, described in docs/report-json.md.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "analysis/analysis.h"
#include "output/report.h"

namespace atrace::analysis {

// Bad view arguments (a function no probe is named): one line for the user.
class ViewError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct TreeView {
  int max_depth = 0;   // levels of calls shown; 0: all
  double min_pct = 0;  // call paths under this share of the tree's time are hidden
};

// --tree: the report's summary line, the tree as an indented table (calls,
// total, share, self and with kernel events the kernel columns), and how
// many call paths the pruning hid.
std::string render_tree_text(const ReportInput& in, const CallTree& tree, const TreeView& view);
// --tree --format=json: render_json(in, opt) with a `tree` member.
std::string render_tree_json(const ReportInput& in, const ReportOptions& opt, const CallTree& tree,
                             const TreeView& view);

// The called functions a user's FUNC names: a glob (fnmatch) matching the
// demangled name, the name without its parameter list and return type
// ("ns::add<int>" for "int ns::add<int>(int, int)"), its short name
// ("ns::add") or the name the report shows. Throws ViewError when none does.
std::vector<uint32_t> functions_named(const CallTree& tree, const std::string& func,
                                      const char* option);

// --callers=FUNC / --callees=FUNC (either may be empty): for each function
// FUNC names, its callers (the calls of it each made, their inclusive and
// self time) and its callees (the calls it made to each). With `stacks`
// (a trace recorded with --stack), the callers its entries' call stacks
// name follow, traced or not, each said to come from the stacks.
std::string render_callers_text(const ReportInput& in, const CallTree& tree,
                                const std::string& callers, const std::string& callees,
                                const StackCallers* stacks = nullptr);
std::string render_callers_json(const ReportInput& in, const ReportOptions& opt,
                                const CallTree& tree, const std::string& callers,
                                const std::string& callees, const StackCallers* stacks = nullptr);

// --flows[=LEVEL] (analysis/flow_view.h): the edges, most first, the
// cheapest split into two groups and what the graph could not hold.
std::string render_flows_text(const ReportInput& in, const FlowView& flows);
// render_json(in, opt) with `flows` (the edges) and `flow_graph` (level,
// nodes, split, what was left out and what was recorded).
std::string render_flows_json(const ReportInput& in, const ReportOptions& opt,
                              const FlowView& flows);

// --diff: one trace (`base`) against another (`other`); `*_file` name them.
struct DiffInput {
  const ReportInput& base;
  const std::string& base_file;
  const ReportInput& other;
  const std::string& other_file;
};
// Functions matched by name and module; rows sorted by the largest absolute
// change of opt.sort's number (calls, self, otherwise total; name: by name).
std::string render_diff_text(const DiffInput& in, const ReportOptions& opt);
std::string render_diff_json(const DiffInput& in, const ReportOptions& opt);

}  // namespace atrace::analysis
