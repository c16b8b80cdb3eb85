// Folded stacks (docs/export-folded.md): one line per call path of the call
// tree, "outer;middle;leaf 1234", the frames from the outermost traced call
// down, then the path's self time in ns or its calls. The format of
// Brendan Gregg's stackcollapse scripts, read by flamegraph.pl, inferno and
// speedscope.
#include <string>
#include <vector>

#include "output/export_graph.h"

namespace atrace::analysis {

namespace {

// ';' separates frames and a line ends the record: neither may appear in a
// frame. (Demangled names hold neither in practice; thread names might.)
std::string frame(std::string s) {
  for (char& c : s)
    if (c == ';') c = ',';
    else if (c == '\n' || c == '\r') c = ' ';
  return s;
}

}  // namespace

void write_folded(const CallTree& tree, const GraphExportOptions& opt, std::ostream& out) {
  // prefix[d] is the path down to depth d, joined: built once per node.
  std::vector<std::string> prefix(1);
  tree.walk([&](uint32_t i, int depth) {
    const CallNode& n = tree.node(i);
    prefix.resize(static_cast<size_t>(depth) + 1);
    prefix[depth] = prefix[depth - 1];
    if (depth > 1) prefix[depth] += ';';
    prefix[depth] += frame(tree.label(i));
    if (n.kind != CallNode::Kind::Function) return true;
    uint64_t value = opt.weight == GraphWeight::Calls ? n.calls : n.self_ns;
    if (value) out << prefix[depth] << ' ' << value << '\n';
    return true;
  });
}

}  // namespace atrace::analysis
