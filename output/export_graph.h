// The exports built from the call tree (call_tree.h), for viewers of
// profiles rather than of timelines:
//
//   folded     "a;b;c 1234" lines: flamegraph.pl, inferno, speedscope
//              (docs/export-folded.md)
//   callgrind  the callgrind format: KCachegrind, callgrind_annotate
//              (docs/export-callgrind.md)
//   dot        the call graph for Graphviz: dot -Tsvg (docs/export-dot.md)
//
// Each reads the whole trace once through the streaming reader; memory is
// the call tree's (distinct call paths), not the trace's. The overloads
// taking a CallTree write one already built.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "analysis/analysis.h"

namespace atrace::formats {
class TraceReader;
}

namespace atrace::analysis {

// What a frame, an edge or a node weighs: time (folded: self time; dot:
// inclusive time of the calls along the edge) or the number of calls.
enum class GraphWeight { Time, Calls };
// "time", "calls"; nullopt otherwise.
std::optional<GraphWeight> parse_graph_weight(std::string_view s);

struct GraphExportOptions {
  GraphWeight weight = GraphWeight::Time;
  // dot: edges and functions weighing less than this percentage of the
  // whole (all calls, or the time of all top-level calls) are left out.
  double min_pct = 0;
  // folded: each stack starts with its thread ("NAME-TID"), a flame graph
  // per thread side by side, instead of all threads merged.
  bool thread_prefix = false;
  // Durations without the probe cost of nested calls (report --compensate),
  // when the trace has calibrated costs.
  bool compensate = false;
  // Full demangled names instead of short ones (function_names.h).
  bool long_names = false;
};

void write_folded(formats::TraceReader& reader, const GraphExportOptions& opt, std::ostream& out);
void write_callgrind(formats::TraceReader& reader, const GraphExportOptions& opt,
                     std::ostream& out);
void write_dot(formats::TraceReader& reader, const GraphExportOptions& opt, std::ostream& out);

void write_folded(const CallTree& tree, const GraphExportOptions& opt, std::ostream& out);
// header: the command and pid written into the file's header lines.
// flows: the trace's flow graph (flow_graph.h), written as two more events
// (Flows, FlowBytes) on edges from each function to those it handed values,
// bytes or wake-ups to, with 0 calls; nullptr or no edges: none.
void write_callgrind(const CallTree& tree, const formats::TraceHeader& header, std::ostream& out,
                     const FlowGraph* flows = nullptr);
void write_dot(const CallTree& tree, const GraphExportOptions& opt, std::ostream& out);

// The tree the reader's exports use: per thread for thread_prefix,
// compensated when asked and possible.
CallTree export_tree(formats::TraceReader& reader, const GraphExportOptions& opt);

// The same three in the signature of `atrace convert`'s table (export.h).
struct ExportOptions;
void export_folded(formats::TraceReader& reader, std::ostream& out, const ExportOptions& options);
void export_callgrind(formats::TraceReader& reader, std::ostream& out,
                      const ExportOptions& options);
void export_dot(formats::TraceReader& reader, std::ostream& out, const ExportOptions& options);
// The flow graph (flow_view.h) per function, one cluster per process and
// host, edges weighted by count (docs/flows.md).
void export_flows_dot(formats::TraceReader& reader, std::ostream& out,
                      const ExportOptions& options);

// A DOT double-quoted string's content: quotes and backslashes escaped,
// line breaks made blanks, bytes that are not UTF-8 (Graphviz warns about
// them) replaced by '?'.
std::string dot_quoted(const std::string& s);

}  // namespace atrace::analysis
