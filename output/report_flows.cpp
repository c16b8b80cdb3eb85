// `atrace report --flows`: the flow graph (analysis/flow_view.h) as a
// table of edges and the cheapest split, as the JSON report's `flows`
// member, and as a weighted DOT graph (`convert --to=flows-dot`).
#include <sstream>

#include "output/render_views.h"
#include "output/report_json_with.h"
#include "output/report_table.h"
#include "output/report_text.h"

namespace atrace::analysis {
namespace {

using json = nlohmann::ordered_json;

const char* plural_of(FlowLevel l) {
  switch (l) {
    case FlowLevel::Function: return "functions";
    case FlowLevel::Thread: return "threads";
    case FlowLevel::Process: return "processes";
    case FlowLevel::Module: return "modules";
    case FlowLevel::Host: return "hosts";
  }
  return "?";
}

std::string node_name(const FlowView& v, size_t i) {
  const FlowNode& n = v.nodes[i];
  return n.host.empty() || v.level == FlowLevel::Host ? n.label : n.host + ": " + n.label;
}

// What each kind needed, when the trace could not show it.
std::vector<std::string> unrecorded(const FlowView& v) {
  std::vector<std::string> out;
  if (!v.values_recorded)
    out.push_back(
        "values: no pointer or hex value was recorded (record --retval=F/p and "
        "--args=G@auto or G@argN/p)");
  if (!v.bytes_recorded) out.push_back("bytes: messages were not recorded (record --kernel=+net)");
  if (!v.wakeups_recorded)
    out.push_back("wake-ups: scheduler events were not recorded (record --kernel=+sched)");
  return out;
}

std::vector<std::string> left_out_lines(const FlowLeftOut& l) {
  std::vector<std::string> out;
  auto line = [&](uint64_t n, const char* one, const char* many, const char* why) {
    if (n) out.push_back(std::to_string(n) + " " + (n == 1 ? one : many) + " " + why);
  };
  line(l.wakeups_untraced, "wake-up", "wake-ups",
       "with the waker or the woken thread outside every traced call");
  line(l.wakeups_unknown, "wake-up", "wake-ups",
       "by an interrupt or a thread the trace does not have");
  line(l.messages_untraced, "message", "messages",
       "with its sender or receiver outside every traced call");
  line(l.messages_unmatched, "received message", "received messages",
       "whose send is not in the trace");
  return out;
}

std::string group_text(const FlowView& v, uint8_t side) {
  std::string s;
  for (size_t i = 0; i < v.nodes.size(); ++i)
    if (v.split->side[i] == side) s += (s.empty() ? "" : ", ") + node_name(v, i);
  return s;
}

json node_json(const FlowView& v, size_t i) {
  const FlowNode& n = v.nodes[i];
  json j = {{"name", n.label}};
  if (!n.process.empty()) j["process"] = n.process;
  if (!n.host.empty()) j["host"] = n.host;
  j["work_ns"] = n.work_ns;
  return j;
}

}  // namespace

std::string render_flows_text(const ReportInput& in, const FlowView& v) {
  std::ostringstream out;
  const formats::TraceHeader& h = in.header;
  out << "Flows between " << plural_of(v.level) << " of ";
  if (!h.target_command.empty()) out << h.target_command << " ";
  out << "(pid " << h.target_pid << "): " << v.edges.size()
      << (v.edges.size() == 1 ? " edge" : " edges") << "\n\n";
  if (v.edges.empty()) {
    out << "No flows: no value, message or wake-up went from one traced call to another.\n";
  } else {
    Table t({0, 4});
    t.add({"Kind", "Count", "Bytes", "Wait", "From", "To"});
    for (const auto& e : v.edges)
      t.add({to_string(e.kind), std::to_string(e.stats.count),
             e.kind == FlowKind::Bytes ? std::to_string(e.stats.bytes) : "-",
             e.kind == FlowKind::Wakeup ? format_duration(e.stats.wait_ns) : "-",
             node_name(v, e.from), node_name(v, e.to)});
    t.print(out);
  }
  std::vector<std::string> notes;
  if (v.split) {
    out << "\nCheapest split into two groups (" << (v.split->exact ? "exact" : "approximate")
        << "): " << v.split->cut << " hand-offs between them";
    if (v.split_bytes) out << " (" << v.split_bytes << " bytes in messages)";
    out << "\n";
    for (uint8_t s = 0; s < 2; ++s)
      out << "  " << static_cast<char>('A' + s) << " (" << format_duration(v.split->work[s])
          << " on CPU): " << group_text(v, s) << "\n";
    notes.push_back(
        "split: the fewest values, messages and wake-ups" +
        std::string(v.level == FlowLevel::Function ? " and calls" : "") +
        " between the groups for the work of the\n  lighter group (on-CPU self time of its "
        "traced calls); docs/flows.md");
  } else {
    out << "\nNo split: fewer than two " << plural_of(v.level) << " did traced work.\n";
  }
  notes.push_back(
      "Count: values handed on, messages, wake-ups; Wait: how long the woken thread had\n"
      "  slept");
  for (const auto& l : left_out_lines(v.left_out)) notes.push_back("not in the graph: " + l);
  for (const auto& l : unrecorded(v)) notes.push_back("not recorded: " + l);
  out << "\n";
  for (const auto& n : notes) out << n << "\n";
  return out.str();
}

std::string render_flows_json(const ReportInput& in, const ReportOptions& opt, const FlowView& v) {
  json nodes = json::array();
  for (size_t i = 0; i < v.nodes.size(); ++i) nodes.push_back(node_json(v, i));
  json edges = json::array();
  for (const auto& e : v.edges) {
    json j = {{"from", v.nodes[e.from].label}, {"to", v.nodes[e.to].label},
              {"from_node", e.from},           {"to_node", e.to},
              {"kind", to_string(e.kind)},     {"count", e.stats.count},
              {"bytes", e.stats.bytes}};
    if (e.kind == FlowKind::Wakeup) j["wait_ns"] = e.stats.wait_ns;
    edges.push_back(std::move(j));
  }
  json split = nullptr;
  if (v.split) {
    json groups = json::array({json::array(), json::array()});
    for (size_t i = 0; i < v.nodes.size(); ++i)
      if (v.split->side[i] < 2) groups[v.split->side[i]].push_back(v.nodes[i].label);
    split = {{"groups", groups},
             {"cut", v.split->cut},
             {"cut_bytes", v.split_bytes},
             {"work_ns", {v.split->work[0], v.split->work[1]}},
             {"exact", v.split->exact}};
  }
  const auto& l = v.left_out;
  json left = {{"wakeups_untraced", l.wakeups_untraced},
               {"wakeups_unknown", l.wakeups_unknown},
               {"messages_untraced", l.messages_untraced},
               {"messages_unmatched", l.messages_unmatched}};
  json recorded = {
      {"values", v.values_recorded}, {"bytes", v.bytes_recorded}, {"wakeups", v.wakeups_recorded}};
  json graph = {{"level", to_string(v.level)},
                {"nodes", nodes},
                {"split", split},
                {"left_out", left},
                {"recorded", recorded}};
  std::vector<std::pair<std::string, json>> members;
  members.emplace_back("flows", std::move(edges));
  members.emplace_back("flow_graph", std::move(graph));
  return render_json_with(in, opt, std::move(members));
}

}  // namespace atrace::analysis
