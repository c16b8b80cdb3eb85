// `atrace report --tree`: the call tree as an indented table, or as a
// nested `tree` member of the JSON report. Pruning (--depth, --min-pct)
// hides call paths but never changes a shown node's numbers: a parent's
// total still includes its hidden callees.
#include <cstdio>
#include <sstream>

#include "output/render_views.h"
#include "output/report_json_with.h"
#include "output/report_table.h"
#include "output/report_text.h"

namespace atrace::analysis {

namespace {

using json = nlohmann::ordered_json;

// Deeper JSON would risk the serializer's recursion on a hostile file; a
// real program's traced stacks are far shallower.
constexpr int kMaxJsonDepth = 1000;

std::string share(uint64_t part, uint64_t whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%",
                whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0);
  return buf;
}

// Whether a node is shown: within the depth and above the share.
struct Pruning {
  const CallTree& tree;
  const TreeView& view;
  uint64_t hidden = 0;  // nodes not shown, whole subtrees counted
  bool shown(uint32_t i, int depth) {
    const CallNode& n = tree.node(i);
    bool deep = view.max_depth > 0 && depth > view.max_depth;
    bool light = 100.0 * static_cast<double>(n.total_ns) <
                 view.min_pct * static_cast<double>(tree.root().total_ns);
    if (!deep && !light) return true;
    hidden += subtree_size(i);
    return false;
  }
  uint64_t subtree_size(uint32_t i) const {
    uint64_t count = 0;
    std::vector<uint32_t> todo{i};
    while (!todo.empty()) {
      uint32_t k = todo.back();
      todo.pop_back();
      count++;
      const auto& c = tree.node(k).children;
      todo.insert(todo.end(), c.begin(), c.end());
    }
    return count;
  }
};

std::string thread_line(const CallTree& tree, uint32_t i) {
  const CallNode& n = tree.node(i);
  std::string s = "Thread " + std::to_string(n.tid);
  if (!tree.name(i).empty()) s += " (" + tree.name(i) + ")";
  return s;
}

json node_json(const CallTree& tree, uint32_t i) {
  const CallNode& n = tree.node(i);
  json row;
  if (n.kind == CallNode::Kind::Thread) {
    row["thread"] = n.tid;
    row["thread_name"] = tree.name(i);
  } else {
    row["name"] = tree.name(i);
    row["short_name"] = tree.names().short_of(tree.name(i), tree.module(i));
    row["module"] = tree.module(i);
  }
  const KernelTimes& k = n.kernel;
  const KernelTimes& s = n.self_kernel;
  row.update(json{{"calls", n.calls},
                  {"unfinished", n.unfinished},
                  {"unwound", n.unwound},
                  {"abandoned", n.abandoned},
                  {"untimed", n.untimed},
                  {"total_ns", n.total_ns},
                  {"self_ns", n.self_ns},
                  {"offcpu_ns", k.offcpu_ns()},
                  {"syscall_ns", k.syscall_ns},
                  {"syscalls", k.syscalls},
                  {"faults", k.faults},
                  {"self_offcpu_ns", s.offcpu_ns()},
                  {"self_syscall_ns", s.syscall_ns},
                  {"self_syscalls", s.syscalls},
                  {"self_faults", s.faults}});
  row["children"] = json::array();
  return row;
}

}  // namespace

std::string render_json_with(const ReportInput& in, const ReportOptions& opt,
                             const std::string& member, json value) {
  std::vector<std::pair<std::string, json>> members;
  members.emplace_back(member, std::move(value));
  return render_json_with(in, opt, std::move(members));
}

std::string render_json_with(const ReportInput& in, const ReportOptions& opt,
                             std::vector<std::pair<std::string, json>> members) {
  json doc = json::parse(render_json(in, opt));
  for (auto& [name, value] : members) doc[name] = std::move(value);
  return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string render_tree_text(const ReportInput& in, const CallTree& tree, const TreeView& view) {
  std::ostringstream out;
  const formats::TraceHeader& h = in.header;
  out << "Call tree of ";
  if (!h.target_command.empty()) out << h.target_command << " ";
  out << "(pid " << h.target_pid << "): " << format_duration(tree.root().total_ns)
      << " in traced calls, " << tree.size() - 1 << " call paths";
  if (tree.per_thread()) out << ", per thread";
  out << "\n";
  if (tree.root().children.empty()) {
    out << "\nNo function calls recorded.\n";
    return out.str();
  }

  const bool kernel = tree.has_kernel();
  Table t;
  std::vector<std::string> head = {"Calls", "Total", "%", "Self"};
  if (kernel)
    head.insert(head.end(), {"Off-CPU", "Self off", "Sys time", "Self sys", "Syscalls", "Faults"});
  head.push_back("Function");
  t.add(std::move(head));
  Pruning prune{tree, view};
  tree.walk([&](uint32_t i, int depth) {
    if (!prune.shown(i, depth)) return false;
    const CallNode& n = tree.node(i);
    std::string calls = std::to_string(n.calls);
    if (n.unfinished) calls += " (" + std::to_string(n.unfinished) + " unfinished)";
    if (n.unwound) calls += " (" + std::to_string(n.unwound) + " unwound)";
    if (n.abandoned) calls += " (" + std::to_string(n.abandoned) + " abandoned)";
    calls += untimed_counts(n.untimed, n.switched, n.given_back);
    std::vector<std::string> row = {
        calls, format_duration(n.total_ns), share(n.total_ns, tree.root().total_ns),
        n.kind == CallNode::Kind::Function ? format_duration(n.self_ns) : ""};
    if (kernel)
      row.insert(row.end(),
                 {format_duration(n.kernel.offcpu_ns()), format_duration(n.self_kernel.offcpu_ns()),
                  format_duration(n.kernel.syscall_ns), format_duration(n.self_kernel.syscall_ns),
                  std::to_string(n.kernel.syscalls), std::to_string(n.kernel.faults)});
    std::string indent(2 * static_cast<size_t>(depth - 1), ' ');
    row.push_back(indent +
                  (n.kind == CallNode::Kind::Thread ? thread_line(tree, i) : tree.label(i)));
    t.add(std::move(row));
    return true;
  });
  out << "\n";
  t.print(out);

  std::vector<std::string> notes;
  if (prune.hidden) {
    std::string why;
    if (view.max_depth > 0)
      why += "deeper than " + std::to_string(view.max_depth) +
             (view.max_depth == 1 ? " level" : " levels");
    if (view.min_pct > 0) {
      char pct[32];
      std::snprintf(pct, sizeof pct, "%g%%", view.min_pct);
      why += std::string(why.empty() ? "" : " or ") + "under " + pct + " of the time";
    }
    notes.push_back(std::to_string(prune.hidden) +
                    (prune.hidden == 1 ? " call path " : " call paths ") + why +
                    " not shown\n  (their time is in their callers' totals)");
  }
  notes.push_back(
      "%: share of the time in traced calls (all threads added); a recursive call's\n"
      "  time is also in the outer call's line");
  if (tree.root().unfinished)
    notes.push_back(
        "unfinished: calls still running when the recording stopped or their thread\n"
        "  exited; closed at that time, so their times are lower bounds");
  if (tree.orphan_exits())
    notes.push_back(
        std::to_string(tree.orphan_exits()) +
        " exits without a recorded entry ignored\n"
        "  (calls already running when the recording started, or whose entry was lost)");
  if (in.profile.lost_events)
    notes.push_back(std::to_string(in.profile.lost_events) +
                    " events lost (ring buffer full): figures may be incomplete");
  out << "\n";
  for (const auto& n : notes) out << n << "\n";
  return out.str();
}

std::string render_tree_json(const ReportInput& in, const ReportOptions& opt, const CallTree& tree,
                             const TreeView& view) {
  TreeView bounded = view;
  if (bounded.max_depth <= 0 || bounded.max_depth > kMaxJsonDepth)
    bounded.max_depth = kMaxJsonDepth;
  Pruning prune{tree, bounded};
  json root = {{"per_thread", tree.per_thread()},  {"calls", tree.root().calls},
               {"total_ns", tree.root().total_ns}, {"max_depth", view.max_depth},
               {"min_pct", view.min_pct},          {"hidden", 0},
               {"children", json::array()}};
  // The open JSON objects along the path being walked: [0] is the root.
  std::vector<json*> open{&root};
  tree.walk([&](uint32_t i, int depth) {
    if (!prune.shown(i, depth)) return false;
    open.resize(static_cast<size_t>(depth));
    json& siblings = (*open.back())["children"];
    siblings.push_back(node_json(tree, i));
    open.push_back(&siblings.back());
    return true;
  });
  root["hidden"] = prune.hidden;
  return render_json_with(in, opt, "tree", std::move(root));
}

}  // namespace atrace::analysis
