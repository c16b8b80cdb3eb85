// The call graph for Graphviz (docs/export-dot.md): one node per function
// (its calls, self and total time), one edge per caller -> callee pair (the
// calls along it and their inclusive time). Edge width follows the weight
// (time or calls); nodes are filled from pale to red by self time; with
// min_pct, functions and edges lighter than that share of the whole are
// left out, so the graph of a large program stays readable.
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <utility>

#include "output/export_graph.h"
#include "output/report.h"

namespace atrace::analysis {

namespace {

std::string percent(uint64_t part, uint64_t whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%",
                whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0);
  return buf;
}

// From pale (#fff5eb) to red (#cb181d) as `f` goes from 0 to 1.
std::string heat(double f) {
  f = std::clamp(f, 0.0, 1.0);
  auto mix = [f](int a, int b) { return static_cast<int>(a + (b - a) * f + 0.5); };
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", mix(0xff, 0xcb), mix(0xf5, 0x18),
                mix(0xeb, 0x1d));
  return buf;
}

struct Edge {
  uint64_t calls = 0, time_ns = 0;
};

}  // namespace

void write_dot(const CallTree& tree, const GraphExportOptions& opt, std::ostream& out) {
  const bool by_calls = opt.weight == GraphWeight::Calls;
  std::map<uint32_t, FunctionTotals> fns;
  std::map<uint32_t, uint32_t> node_of;  // probe id -> a node of it (names)
  for (const auto& f : tree.functions()) fns[f.id] = f;
  std::map<std::pair<uint32_t, uint32_t>, Edge> edges;
  uint64_t all_calls = 0;
  tree.walk([&](uint32_t i, int) {
    const CallNode& n = tree.node(i);
    if (n.kind != CallNode::Kind::Function) return true;
    node_of.try_emplace(n.id, i);
    all_calls += n.calls;
    const CallNode& parent = tree.node(n.parent);
    if (parent.kind == CallNode::Kind::Function) {
      Edge& e = edges[{parent.id, n.id}];
      e.calls += n.calls;
      e.time_ns += n.total_ns;
    }
    return true;
  });
  // The whole: every call, or the time of the top-level calls (the time
  // spent in traced code, all threads added).
  const uint64_t whole = by_calls ? all_calls : tree.root().total_ns;
  auto heavy = [&](uint64_t w) {
    return whole == 0 || 100.0 * static_cast<double>(w) >= opt.min_pct * static_cast<double>(whole);
  };
  auto weight_of = [&](const FunctionTotals& f) { return by_calls ? f.calls : f.total_ns; };

  uint64_t max_self = 1, max_edge = 1;
  for (const auto& [id, f] : fns) max_self = std::max(max_self, f.self_ns);
  for (const auto& [key, e] : edges) max_edge = std::max(max_edge, by_calls ? e.calls : e.time_ns);

  out << "digraph atrace {\n"
      << "  graph [rankdir=TB, label=\"" << (by_calls ? "edges: calls" : "edges: time")
      << "; nodes filled by self time\", labelloc=t];\n"
      << "  node [shape=box, style=\"rounded,filled\", fontsize=10];\n"
      << "  edge [fontsize=9];\n";
  for (const auto& [id, f] : fns) {
    if (!heavy(weight_of(f))) continue;
    uint32_t node = node_of.at(id);
    std::string label = tree.names().of(tree.name(node), tree.module(node));
    if (!tree.module(node).empty() && tree.module(node) != tree.main_module())
      label += "\n[" + tree.module(node) + "]";
    label += "\nself " + format_duration(f.self_ns) + " (" +
             percent(f.self_ns, tree.root().total_ns) + ")";
    label += "\ntotal " + format_duration(f.total_ns) + " (" +
             percent(f.total_ns, tree.root().total_ns) + ")";
    label += "\n" + std::to_string(f.calls) + (f.calls == 1 ? " call" : " calls");
    double hot = static_cast<double>(f.self_ns) / static_cast<double>(max_self);
    // Label lines are joined by "\n" escapes after quoting the parts.
    std::string text;
    size_t start = 0;
    for (size_t nl; (nl = label.find('\n', start)) != std::string::npos; start = nl + 1)
      text += dot_quoted(label.substr(start, nl - start)) + "\\n";
    text += dot_quoted(label.substr(start));
    out << "  f" << id << " [label=\"" << text << "\", fillcolor=\"" << heat(hot) << "\""
        << (hot > 0.6 ? ", fontcolor=\"#ffffff\"" : "") << "];\n";
  }
  for (const auto& [key, e] : edges) {
    uint64_t w = by_calls ? e.calls : e.time_ns;
    if (!heavy(w) || !heavy(weight_of(fns.at(key.first))) || !heavy(weight_of(fns.at(key.second))))
      continue;
    double share = static_cast<double>(w) / static_cast<double>(max_edge);
    char width[16];
    std::snprintf(width, sizeof width, "%.2f", 1.0 + 5.0 * share);
    // Grey for light edges to near black for the heaviest; the label's
    // leading blanks keep it clear of a wide edge.
    int grey = static_cast<int>(0xb0 * (1.0 - share) + 0.5);
    char color[8];
    std::snprintf(color, sizeof color, "#%02x%02x%02x", grey, grey, grey);
    out << "  f" << key.first << " -> f" << key.second << " [label=\"   " << e.calls
        << (e.calls == 1 ? " call" : " calls") << "\\l   " << format_duration(e.time_ns)
        << "\\l\", penwidth=" << width << ", color=\"" << color << "\"];\n";
  }
  out << "}\n";
}

}  // namespace atrace::analysis
