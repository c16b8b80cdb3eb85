// `convert --to=flows-dot` (docs/flows.md): the flow graph per function as
// Graphviz DOT. One cluster per host (merged traces) holding one cluster
// per process; one node per function of a process (on-CPU self time in
// its label); one edge per (from, to, kind), labelled with its count (and
// bytes), its width growing with the count, its style telling the kind
// (values solid, bytes bold, wake-ups dashed). The cheapest split's groups
// are coloured: blue and orange.
#include <algorithm>
#include <cmath>
#include <map>
#include <ostream>
#include <set>

#include "formats/trace_reader.h"
#include "output/export.h"
#include "output/export_graph.h"
#include "output/report.h"

namespace atrace::analysis {
namespace {

const char* style(FlowKind k) {
  switch (k) {
    case FlowKind::Value: return "solid";
    case FlowKind::Bytes: return "bold";
    case FlowKind::Wakeup: return "dashed";
  }
  return "solid";
}

}  // namespace

void export_flows_dot(formats::TraceReader& reader, std::ostream& out,
                      const ExportOptions& options) {
  const FlowView v = read_flows(reader, FlowLevel::Function, options.long_names);
  out << "digraph flows {\n"
         "  graph [rankdir=LR, fontname=\"Helvetica\", label=\"flows: values (solid), bytes "
         "(bold), wake-ups (dashed)\"];\n"
         "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", "
         "fillcolor=\"#ffffff\"];\n"
         "  edge [fontname=\"Helvetica\", fontsize=10];\n";
  // host -> process -> nodes
  std::map<std::string, std::map<std::string, std::vector<size_t>>> clusters;
  for (size_t i = 0; i < v.nodes.size(); ++i)
    clusters[v.nodes[i].host][v.nodes[i].process].push_back(i);
  const char* fill[3] = {"#c6dbef", "#fdd0a2", "#ffffff"};
  size_t cluster = 0;
  for (const auto& [host, processes] : clusters) {
    const bool host_box = !host.empty();
    if (host_box)
      out << "  subgraph cluster_" << cluster++ << " {\n    label=\"" << dot_quoted(host)
          << "\";\n";
    for (const auto& [process, ids] : processes) {
      out << "  subgraph cluster_" << cluster++ << " {\n    label=\"" << dot_quoted(process)
          << "\";\n";
      for (size_t i : ids) {
        const uint8_t side = v.split ? v.split->side[i] : 2;
        out << "    n" << i << " [label=\"" << dot_quoted(v.nodes[i].label) << "\\n"
            << dot_quoted(format_duration(v.nodes[i].work_ns)) << " on CPU\", fillcolor=\""
            << fill[side] << "\"];\n";
      }
      out << "  }\n";
    }
    if (host_box) out << "  }\n";
  }
  uint64_t most = 1;
  for (const auto& e : v.edges) most = std::max(most, e.stats.count);
  for (const auto& e : v.edges) {
    std::string label = std::to_string(e.stats.count);
    if (e.kind == FlowKind::Bytes) label += " msgs, " + std::to_string(e.stats.bytes) + " B";
    else label += e.kind == FlowKind::Value ? " values" : " wake-ups";
    const double width = 1.0 + 4.0 * std::log1p(static_cast<double>(e.stats.count)) /
                                   std::log1p(static_cast<double>(most));
    char w[16];
    std::snprintf(w, sizeof w, "%.2f", width);
    out << "  n" << e.from << " -> n" << e.to << " [label=\"" << dot_quoted(label)
        << "\", style=" << style(e.kind) << ", penwidth=" << w << "];\n";
  }
  out << "}\n";
}

}  // namespace atrace::analysis
