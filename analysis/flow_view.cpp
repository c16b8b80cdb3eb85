// Aggregation of the flow graph's ends into a view's nodes (flow_view.h).
#include "analysis/flow_view.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "analysis/function_names.h"
#include "analysis/process_text.h"
#include "formats/trace_reader.h"

namespace atrace::analysis {
namespace {

using Key = std::tuple<uint16_t, uint64_t, std::string>;  // host, number, module

const std::string& at_or_empty(const std::vector<std::string>& v, size_t i) {
  static const std::string empty;
  return i < v.size() ? v[i] : empty;
}

class Nodes {
 public:
  Nodes(FlowLevel level, const FlowNaming& names,
        const std::set<std::pair<uint16_t, uint32_t>>& multi)
      : level_(level), names_(names), multi_(multi) {}

  size_t of(const FlowEnd& e) {
    Key k;
    switch (level_) {
      case FlowLevel::Function: k = {e.host, uint64_t{e.pid} << 32 | e.probe, ""}; break;
      case FlowLevel::Thread: k = {e.host, e.tid, ""}; break;
      case FlowLevel::Process: k = {e.host, e.pid, ""}; break;
      case FlowLevel::Module: k = {0, 0, at_or_empty(names_.module, e.probe)}; break;
      case FlowLevel::Host: k = {e.host, 0, ""}; break;
    }
    auto [it, fresh] = index_.try_emplace(k, nodes_.size());
    if (fresh) nodes_.push_back(make(e));
    return it->second;
  }
  std::vector<FlowNode> take() { return std::move(nodes_); }

 private:
  std::string comm(uint16_t host, uint32_t tid) const {
    auto it = names_.comm.find(formats::thread_key(host, tid));
    return it != names_.comm.end() && !it->second.empty() ? it->second : "?";
  }
  std::string process(const FlowEnd& e) const {
    return comm(e.host, e.pid) + " (pid " + std::to_string(e.pid) + ")";
  }
  FlowNode make(const FlowEnd& e) const {
    FlowNode n;
    if (level_ != FlowLevel::Module) n.host = at_or_empty(names_.hosts, e.host);
    switch (level_) {
      case FlowLevel::Function:
        n.label = display_name(at_or_empty(names_.function, e.probe),
                               at_or_empty(names_.module, e.probe), names_.main_module);
        // The same function in two processes is two nodes: say which.
        if (multi_.count({e.host, e.probe})) n.label += " (pid " + std::to_string(e.pid) + ")";
        n.process = process(e);
        break;
      case FlowLevel::Thread:
        n.label = comm(e.host, e.tid) + " " + std::to_string(e.tid);
        n.process = process(e);
        break;
      case FlowLevel::Process: n.label = process(e); break;
      case FlowLevel::Module: n.label = at_or_empty(names_.module, e.probe); break;
      case FlowLevel::Host: n.label = n.host.empty() ? "this host" : n.host; break;
    }
    return n;
  }

  FlowLevel level_;
  const FlowNaming& names_;
  const std::set<std::pair<uint16_t, uint32_t>>& multi_;
  std::map<Key, size_t> index_;
  std::vector<FlowNode> nodes_;
};

}  // namespace

const char* to_string(FlowLevel l) {
  switch (l) {
    case FlowLevel::Function: return "function";
    case FlowLevel::Thread: return "thread";
    case FlowLevel::Process: return "process";
    case FlowLevel::Module: return "module";
    case FlowLevel::Host: return "host";
  }
  return "?";
}

std::optional<FlowLevel> parse_flow_level(const std::string& s) {
  for (auto l : {FlowLevel::Function, FlowLevel::Thread, FlowLevel::Process, FlowLevel::Module,
                 FlowLevel::Host})
    if (s == to_string(l)) return l;
  return std::nullopt;
}

FlowView flow_view(const FlowGraph& g, FlowLevel level, const FlowNaming& names) {
  // Functions seen in more than one process of a host.
  std::map<std::pair<uint16_t, uint32_t>, std::set<uint32_t>> pids;
  auto note = [&](const FlowEnd& e) { pids[{e.host, e.probe}].insert(e.pid); };
  for (const auto& e : g.edges) note(e.from), note(e.to);
  for (const auto& [e, w] : g.work_ns) note(e);
  std::set<std::pair<uint16_t, uint32_t>> multi;
  for (const auto& [k, s] : pids)
    if (s.size() > 1) multi.insert(k);

  Nodes nodes(level, names, multi);
  FlowView v;
  v.level = level;
  std::map<std::tuple<size_t, size_t, FlowKind>, FlowStats> edges;
  for (const auto& e : g.edges) {
    FlowStats& s = edges[{nodes.of(e.from), nodes.of(e.to), e.kind}];
    s.count += e.stats.count;
    s.bytes += e.stats.bytes;
    s.wait_ns += e.stats.wait_ns;
  }
  std::vector<uint64_t> work;
  for (const auto& [end, ns] : g.work_ns) {
    const size_t i = nodes.of(end);
    if (work.size() <= i) work.resize(i + 1, 0);
    work[i] += ns;
  }
  std::vector<SplitEdge> split_edges;
  for (const auto& [k, s] : edges) {
    v.edges.push_back({std::get<0>(k), std::get<1>(k), std::get<2>(k), s});
    split_edges.push_back({std::get<0>(k), std::get<1>(k), s.count});
  }
  if (level == FlowLevel::Function)
    for (const auto& c : g.calls)
      split_edges.push_back({nodes.of(c.from), nodes.of(c.to), c.stats.count});
  v.nodes = nodes.take();
  work.resize(v.nodes.size(), 0);
  for (size_t i = 0; i < v.nodes.size(); ++i) v.nodes[i].work_ns = work[i];

  std::stable_sort(v.edges.begin(), v.edges.end(),
                   [](const FlowViewEdge& a, const FlowViewEdge& b) {
                     if (a.kind != b.kind) return a.kind < b.kind;
                     if (a.stats.count != b.stats.count) return a.stats.count > b.stats.count;
                     return a.stats.bytes > b.stats.bytes;
                   });
  v.split = cheapest_split(work, split_edges);
  if (v.split)
    for (const auto& e : v.edges)
      if (e.kind == FlowKind::Bytes && v.split->side[e.from] != v.split->side[e.to])
        v.split_bytes += e.stats.bytes;
  v.left_out = g.left_out;
  v.values_recorded = g.values_recorded;
  v.bytes_recorded = g.bytes_recorded;
  v.wakeups_recorded = g.wakeups_recorded;
  return v;
}

FlowNaming flow_naming(const formats::TraceHeader& h, const std::vector<formats::ProbeInfo>& probes,
                       const CallReplay& replay, const std::vector<formats::HostClocks>& hosts,
                       bool long_names) {
  FlowNaming n;
  FunctionNames names(probes, long_names);
  std::vector<std::string> modules;
  for (const auto& p : probes) {
    if (n.function.size() <= p.id) {
      n.function.resize(p.id + 1);
      n.module.resize(p.id + 1);
    }
    n.function[p.id] = names.of(p.name, p.module);
    n.module[p.id] = p.module;
    modules.push_back(p.module);
  }
  n.main_module = main_module(h, modules);
  for (const auto& [key, t] : replay.threads()) n.comm[key] = t.comm;
  n.hosts = host_labels(hosts);
  return n;
}

FlowView read_flows(formats::TraceReader& reader, FlowLevel level, bool long_names) {
  CallReplay replay(reader.probes());
  FlowCollector flows(replay, reader.hosts(), reader.header().kernel_events);
  formats::Event ev;
  while (reader.next(ev)) replay.add(ev);
  replay.finish(reader.header().end_mono_ns);
  return flow_view(
      flows.result(), level,
      flow_naming(reader.header(), reader.probes(), replay, reader.hosts(), long_names));
}

}  // namespace atrace::analysis
