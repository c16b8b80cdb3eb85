// What the call-tree exports share: the weight option and the tree they are
// built from.
#include "output/export_graph.h"

#include "formats/trace_reader.h"
#include "output/export.h"

namespace atrace::analysis {

std::optional<GraphWeight> parse_graph_weight(std::string_view s) {
  if (s == "time") return GraphWeight::Time;
  if (s == "calls") return GraphWeight::Calls;
  return std::nullopt;
}

CallTree export_tree(formats::TraceReader& reader, const GraphExportOptions& opt) {
  CallTreeOptions t;
  t.per_thread = opt.thread_prefix;
  t.long_names = opt.long_names;
  if (opt.compensate) t.compensate = probe_costs(reader.header());
  return build_call_tree(reader, t);
}

void write_folded(formats::TraceReader& reader, const GraphExportOptions& opt, std::ostream& out) {
  write_folded(export_tree(reader, opt), opt, out);
}

void write_callgrind(formats::TraceReader& reader, const GraphExportOptions& opt,
                     std::ostream& out) {
  // The call tree and the flow graph from one replay.
  CallTreeOptions t;
  t.per_thread = opt.thread_prefix;
  t.long_names = opt.long_names;
  CallReplay replay(reader.probes());
  if (opt.compensate) replay.compensate(probe_costs(reader.header()));
  CallTreeBuilder tree(replay, reader.header(), reader.probes(), t);
  FlowCollector flows(replay, reader.hosts(), reader.header().kernel_events);
  reader.rewind();
  formats::Event ev;
  while (reader.next(ev)) replay.add(ev);
  replay.finish(reader.header().end_mono_ns);
  const FlowGraph graph = flows.result();
  write_callgrind(tree.result(reader.threads()), reader.header(), out, &graph);
}

void write_dot(formats::TraceReader& reader, const GraphExportOptions& opt, std::ostream& out) {
  write_dot(export_tree(reader, opt), opt, out);
}

namespace {
GraphExportOptions graph_options(const ExportOptions& o) {
  GraphExportOptions g;
  g.weight = parse_graph_weight(o.weight).value_or(GraphWeight::Time);
  g.min_pct = o.min_pct;
  g.thread_prefix = o.threads;
  g.long_names = o.long_names;
  return g;
}
}  // namespace

void export_folded(formats::TraceReader& reader, std::ostream& out, const ExportOptions& options) {
  write_folded(reader, graph_options(options), out);
}

std::string dot_quoted(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80           ? 1
                 : (c >> 5) == 0x6  ? 2
                 : (c >> 4) == 0xe  ? 3
                 : (c >> 3) == 0x1e ? 4
                                    : 0;
    bool ok = len > 0 && i + len <= s.size();
    for (size_t k = 1; ok && k < len; k++) ok = (static_cast<unsigned char>(s[i + k]) >> 6) == 0x2;
    if (!ok) {
      out += '?';
      i++;
      continue;
    }
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n' || c == '\r') out += ' ';
    else out.append(s, i, len);
    i += len;
  }
  return out;
}

void export_callgrind(formats::TraceReader& reader, std::ostream& out,
                      const ExportOptions& options) {
  write_callgrind(reader, graph_options(options), out);
}

void export_dot(formats::TraceReader& reader, std::ostream& out, const ExportOptions& options) {
  write_dot(reader, graph_options(options), out);
}

}  // namespace atrace::analysis
