// The callgrind format (docs/export-callgrind.md), as KCachegrind and
// callgrind_annotate read it: per function its self cost ("fn=" then a cost
// line), per caller -> callee pair the calls and their inclusive cost
// ("cfn=", "calls=", cost line). Events: Time in ns; with kernel events also
// OffCPU and SysTime (ns), Syscalls and Faults. Every cost sits on line 0
// of file "???" (there is no source position); the module is the object.
// With flows (docs/flows.md), two more events, Flows (values, messages and
// wake-ups handed on) and FlowBytes, on edges F -> G with 0 calls: the
// communication graph next to the call graph, in the same viewer.
// Names are compressed ("(N) name" once, "(N)" after).
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "output/export_graph.h"

namespace atrace::analysis {

namespace {

// Time and, with kernel events, the four kernel numbers.
struct Cost {
  uint64_t time = 0;
  KernelTimes kernel;
  uint64_t flows = 0, flow_bytes = 0;
  void add(uint64_t t, const KernelTimes& k) {
    time += t;
    kernel += k;
  }
};

struct Edge {
  uint64_t calls = 0;
  Cost inclusive;
};

// "(N) name" the first time a name is written in a namespace, "(N)" after.
class Names {
 public:
  std::string operator()(const std::string& name) {
    auto [it, fresh] = ids_.try_emplace(name, ids_.size() + 1);
    std::string id = "(" + std::to_string(it->second) + ")";
    return fresh ? id + " " + clean(name) : id;
  }

 private:
  // A name is the rest of its line.
  static std::string clean(std::string s) {
    for (char& c : s)
      if (c == '\n' || c == '\r') c = ' ';
    return s.empty() ? "???" : s;
  }
  std::unordered_map<std::string, size_t> ids_;
};

class Writer {
 public:
  Writer(const CallTree& tree, std::ostream& out, const FlowGraph* flows) : tree_(tree), out_(out) {
    if (!flows) return;
    // Per (from, to) function, every kind, thread and process added.
    for (const auto& e : flows->edges) {
      Cost& c = flows_[{e.from.probe, e.to.probe}];
      c.flows += e.stats.count;
      c.flow_bytes += e.stats.bytes;
    }
  }

  void header(const formats::TraceHeader& h) {
    out_ << "# callgrind format\n"
         << "version: 1\n"
         << "creator: atrace " << h.atrace_version << "\n";
    if (h.target_pid) out_ << "pid: " << h.target_pid << "\n";
    if (!h.target_command.empty()) out_ << "cmd: " << one_line(h.target_command) << "\n";
    out_ << "positions: line\n"
         << "event: Time : Time (ns)\n";
    if (tree_.has_kernel())
      out_ << "event: OffCPU : Off-CPU time (ns)\n"
           << "event: SysTime : Time in system calls (ns)\n"
           << "event: Syscalls : System calls\n"
           << "event: Faults : Page faults\n";
    if (!flows_.empty())
      out_ << "event: Flows : Values, messages and wake-ups handed on (docs/flows.md)\n"
           << "event: FlowBytes : Bytes in messages handed on\n";
    // "events:" ends the header (callgrind_annotate stops reading it there).
    out_ << "events: Time" << (tree_.has_kernel() ? " OffCPU SysTime Syscalls Faults" : "")
         << (flows_.empty() ? "" : " Flows FlowBytes") << "\n";
  }

  void body() {
    // Self costs per function and calls per (caller, callee), over every
    // node: a function's numbers summed over its call paths.
    std::map<uint32_t, uint32_t> functions;  // probe id -> a node of it (names)
    std::map<uint32_t, Cost> self;
    std::map<std::pair<uint32_t, uint32_t>, Edge> edges;
    tree_.walk([&](uint32_t i, int) {
      const CallNode& n = tree_.node(i);
      if (n.kind != CallNode::Kind::Function) return true;
      functions.try_emplace(n.id, i);
      self[n.id].add(n.self_ns, n.self_kernel);
      const CallNode& parent = tree_.node(n.parent);
      if (parent.kind == CallNode::Kind::Function) {
        Edge& e = edges[{parent.id, n.id}];
        e.calls += n.calls;
        e.inclusive.add(n.total_ns, n.kernel);
      }
      return true;
    });
    name_functions(functions);
    auto edge = edges.begin();
    for (const auto& [id, node] : functions) {
      out_ << "\n";
      position("ob", "fl", node);
      out_ << "fn=" << fn_(names_.at(id)) << "\n";
      cost(self[id]);
      for (; edge != edges.end() && edge->first.first == id; ++edge) {
        uint32_t callee = functions.at(edge->first.second);
        position("cob", "cfl", callee);
        out_ << "cfn=" << fn_(names_.at(edge->first.second)) << "\n"
             << "calls=" << edge->second.calls << " 0\n";
        cost(edge->second.inclusive);
      }
      // Its flows out: an edge of no call, with only the flow events.
      for (auto f = flows_.lower_bound({id, 0}); f != flows_.end() && f->first.first == id; ++f) {
        auto callee = functions.find(f->first.second);
        if (callee == functions.end()) continue;  // no call of it in the tree
        position("cob", "cfl", callee->second);
        out_ << "cfn=" << fn_(names_.at(f->first.second)) << "\n"
             << "calls=0 0\n";
        cost(f->second);
      }
    }
  }

 private:
  static std::string one_line(std::string s) {
    for (char& c : s)
      if (c == '\n' || c == '\r') c = ' ';
    return s;
  }

  // The module is the object (its path, or its name when the table has
  // none). The file is "???", callgrind's own "unknown": the viewers then
  // do not try to annotate the module's binary as if it were source.
  void position(const char* ob, const char* fl, uint32_t node) {
    const formats::ProbeInfo* p = tree_.probe(node);
    const std::string& where = p->path.empty() ? p->module : p->path;
    out_ << ob << "=" << ob_(where) << "\n" << fl << "=" << fl_("???") << "\n";
  }

  // Viewers know a function by (file, name), and the file is always "???":
  // names are the report's (tagged " [module]" outside the program), and
  // two functions still alike (static functions of two sources) get their
  // probe id.
  void name_functions(const std::map<uint32_t, uint32_t>& functions) {
    std::map<std::string, int> seen;
    for (const auto& [id, node] : functions) seen[tree_.label(node)]++;
    for (const auto& [id, node] : functions) {
      std::string name = tree_.label(node);
      if (seen[name] > 1) name += " #" + std::to_string(id);
      names_[id] = std::move(name);
    }
  }

  void cost(const Cost& c) {
    out_ << "0 " << c.time;
    if (tree_.has_kernel())
      out_ << " " << c.kernel.offcpu_ns() << " " << c.kernel.syscall_ns << " " << c.kernel.syscalls
           << " " << c.kernel.faults;
    if (!flows_.empty()) out_ << " " << c.flows << " " << c.flow_bytes;
    out_ << "\n";
  }

  const CallTree& tree_;
  std::ostream& out_;
  Names ob_, fl_, fn_;
  std::map<uint32_t, std::string> names_;                // probe id -> its fn= name
  std::map<std::pair<uint32_t, uint32_t>, Cost> flows_;  // (from, to) probe ids
};

}  // namespace

void write_callgrind(const CallTree& tree, const formats::TraceHeader& header, std::ostream& out,
                     const FlowGraph* flows) {
  Writer w(tree, out, flows);
  w.header(header);
  w.body();
}

}  // namespace atrace::analysis
