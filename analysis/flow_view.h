// A flow graph (flow_graph.h) at the grain a view shows: per function (in
// its process), thread, process, module or host, with names, and the
// cheapest split into two groups (flow_partition.h). What `report --flows`,
// its JSON `flows` and `convert --to=flows-dot` print.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/flow_graph.h"
#include "analysis/flow_partition.h"

namespace atrace::formats {
class TraceReader;
}

namespace atrace::analysis {

enum class FlowLevel : uint8_t { Function, Thread, Process, Module, Host };
// "function", "thread", "process", "module", "host"
const char* to_string(FlowLevel l);
// nullopt for another word.
std::optional<FlowLevel> parse_flow_level(const std::string& s);
inline constexpr const char* kFlowLevels = "function, thread, process, module, host";

// How the ends are named: filled from the trace and its replay.
struct FlowNaming {
  // Probe id -> its function's shown name and module.
  std::vector<std::string> function, module;
  std::string main_module;  // functions of other modules get "[module]"
  // formats::thread_key -> the thread's name (comm).
  std::map<uint64_t, std::string> comm;
  std::vector<std::string> hosts;  // host labels; empty for one recording
};

struct FlowNode {
  std::string label;     // "transform", "producer 5163", "app (pid 5160)", ...
  std::string process;   // its process, for grouping ("" at process level and above)
  std::string host;      // its host's label ("" in one recording)
  uint64_t work_ns = 0;  // on-CPU self time of its traced calls
};

struct FlowViewEdge {
  size_t from = 0, to = 0;  // into FlowView::nodes
  FlowKind kind = FlowKind::Value;
  FlowStats stats;
};

struct FlowView {
  FlowLevel level = FlowLevel::Function;
  std::vector<FlowNode> nodes;
  // Most first: by kind, then count, then bytes. Edges inside one node
  // (a thread's functions at thread level) are kept: they are its own
  // traffic, and the split never cuts them.
  std::vector<FlowViewEdge> edges;
  std::optional<FlowSplit> split;
  uint64_t split_bytes = 0;  // bytes of the bytes edges the split cuts
  FlowLeftOut left_out;
  bool values_recorded = false, bytes_recorded = false, wakeups_recorded = false;
};

// The split's weights: every value handed, message and wake-up counts 1;
// at function level, so does every call between two traced functions (a
// call hands its arguments and result too; without them every function
// that only calls would be a group of its own).
FlowView flow_view(const FlowGraph& g, FlowLevel level, const FlowNaming& names);

// The names of a trace's ends, once the replay has read it (the threads'
// names are their last).
FlowNaming flow_naming(const formats::TraceHeader& h, const std::vector<formats::ProbeInfo>& probes,
                       const CallReplay& replay, const std::vector<formats::HostClocks>& hosts,
                       bool long_names);

// The whole of it for one reader (the exporters): reads the trace from the
// reader's position to its end.
FlowView read_flows(formats::TraceReader& reader, FlowLevel level, bool long_names);

}  // namespace atrace::analysis
