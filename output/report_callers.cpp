// `atrace report --callers=FUNC` and `--callees=FUNC`, gprof's call graph
// for one function: read from the call tree, whose node parents are the
// callers and children the callees. A row's calls and times are those of
// the calls along that one caller -> callee pair, every call path added.
#include <fnmatch.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>
#include "base/symbol_name.h"
#include "output/render_views.h"
#include "output/report_table.h"
#include "output/report_text.h"

namespace atrace::analysis {

namespace {

using json = nlohmann::ordered_json;

// The row of the calls coming from the root or a thread: no traced caller.
constexpr const char* kTopLevel = "(no traced caller)";
constexpr uint32_t kNoFunction = UINT32_MAX;

struct Row {
  uint32_t node = 0;  // a node of the other function, for its name
  uint64_t calls = 0, total_ns = 0, self_ns = 0;
};

// FUNC's callers (by the caller's probe id; kNoFunction: top level) or its
// callees (by the callee's): sums over the nodes of FUNC.
std::map<uint32_t, Row> rows_of(const CallTree& tree, uint32_t id, bool callers) {
  std::map<uint32_t, Row> rows;
  auto add = [](Row& r, uint32_t node, const CallNode& n) {
    r.node = node;
    r.calls += n.calls;
    r.total_ns += n.total_ns;
    r.self_ns += n.self_ns;
  };
  tree.walk([&](uint32_t i, int) {
    const CallNode& n = tree.node(i);
    if (n.kind != CallNode::Kind::Function || n.id != id) return true;
    if (callers) {
      const CallNode& p = tree.node(n.parent);
      bool traced = p.kind == CallNode::Kind::Function;
      add(rows[traced ? p.id : kNoFunction], traced ? n.parent : CallTree::kRoot, n);
    } else {
      for (uint32_t c : n.children) add(rows[tree.node(c).id], c, tree.node(c));
    }
    return true;
  });
  return rows;
}

// Largest total first, then by name.
std::vector<std::pair<uint32_t, Row>> ordered(const CallTree& tree, std::map<uint32_t, Row> rows) {
  std::vector<std::pair<uint32_t, Row>> out(rows.begin(), rows.end());
  std::stable_sort(out.begin(), out.end(), [&](const auto& a, const auto& b) {
    if (a.second.total_ns != b.second.total_ns) return a.second.total_ns > b.second.total_ns;
    return tree.label(a.second.node) < tree.label(b.second.node);
  });
  return out;
}

// Whether the user's FUNC names the function `name`: FUNC is a glob
// (fnmatch) over its demangled name, that name without parameters and
// return type, its short name, or the name the report shows.
bool is_named(const std::string& func, const std::string& name, const std::string& shown) {
  return base::glob_names(func, name) || fnmatch(func.c_str(), shown.c_str(), 0) == 0;
}

const FunctionTotals* totals_of(const std::vector<FunctionTotals>& all, uint32_t id) {
  for (const auto& f : all)
    if (f.id == id) return &f;
  return nullptr;
}

void print_rows(std::ostream& out, const CallTree& tree, const std::map<uint32_t, Row>& rows,
                const char* who) {
  Table t;
  t.add({"Calls", "Total", "Self", who});
  for (const auto& [id, r] : ordered(tree, rows))
    t.add({std::to_string(r.calls), format_duration(r.total_ns), format_duration(r.self_ns),
           id == kNoFunction ? kTopLevel : tree.label(r.node)});
  std::ostringstream table;
  t.print(table);
  std::istringstream lines(table.str());
  for (std::string line; std::getline(lines, line);) out << "  " << line << '\n';
}

const std::string& short_of(const CallTree& tree, uint32_t node) {
  return tree.names().short_of(tree.name(node), tree.module(node));
}

json rows_json(const CallTree& tree, const std::map<uint32_t, Row>& rows) {
  json out = json::array();
  for (const auto& [id, r] : ordered(tree, rows))
    out.push_back(json{{"name", id == kNoFunction ? kTopLevel : tree.name(r.node)},
                       {"short_name", id == kNoFunction ? kTopLevel : short_of(tree, r.node)},
                       {"module", id == kNoFunction ? "" : tree.module(r.node)},
                       {"calls", r.calls},
                       {"total_ns", r.total_ns},
                       {"self_ns", r.self_ns}});
  return out;
}

// A caller named by a call stack, as the report shows it.
std::string stack_caller_label(const StackCaller& c) {
  return c.function.empty() ? "[unknown]" : base::base_name(c.function);
}

// The callers FUNC's entries' call stacks name (record --stack).
void print_stack_callers(std::ostream& out, const StackCallers& stacks, uint32_t id,
                         uint64_t calls) {
  auto rows = stacks.callers_of(id);
  if (rows.empty()) return;
  out << "  From call stacks (" << stacks.stacks_of(id) << " of its " << calls
      << (calls == 1 ? " call" : " calls") << " have one), traced callers or not:\n";
  Table t;
  t.add({"Calls", "Caller", "Module", "Traced"});
  for (const auto& r : rows)
    t.add({std::to_string(r.calls), stack_caller_label(r), r.module.empty() ? "?" : r.module,
           r.traced ? "yes" : "no (stack)"});
  std::ostringstream table;
  t.print(table);
  std::istringstream lines(table.str());
  for (std::string line; std::getline(lines, line);) out << "    " << line << '\n';
}

json stack_callers_json(const StackCallers& stacks, uint32_t id) {
  json out = json::array();
  for (const auto& r : stacks.callers_of(id))
    out.push_back(json{{"name", r.function.empty() ? "[unknown]" : r.function},
                       {"short_name", stack_caller_label(r)},
                       {"module", r.module},
                       {"calls", r.calls},
                       {"traced", r.traced}});
  return out;
}

// The node of function `id` that names it (any will do).
uint32_t node_of(const CallTree& tree, uint32_t id) {
  uint32_t found = CallTree::kRoot;
  tree.walk([&](uint32_t i, int) {
    if (found == CallTree::kRoot && tree.node(i).kind == CallNode::Kind::Function &&
        tree.node(i).id == id)
      found = i;
    return found == CallTree::kRoot;
  });
  return found;
}

json view_json(const CallTree& tree, const std::vector<FunctionTotals>& all,
               const std::string& func, const char* option, bool callers,
               const StackCallers* stacks) {
  json out = json::array();
  for (uint32_t id : functions_named(tree, func, option)) {
    const FunctionTotals* f = totals_of(all, id);
    uint32_t node = node_of(tree, id);
    out.push_back(
        json{{"name", tree.name(node)},
             {"short_name", short_of(tree, node)},
             {"module", tree.module(node)},
             {"calls", f->calls},
             {"total_ns", f->total_ns},
             {"self_ns", f->self_ns},
             {callers ? "callers" : "callees", rows_json(tree, rows_of(tree, id, callers))}});
    if (callers && stacks && stacks->stacks_of(id))
      out.back()["stack_callers"] = stack_callers_json(*stacks, id);
  }
  return out;
}

}  // namespace

std::vector<uint32_t> functions_named(const CallTree& tree, const std::string& func,
                                      const char* option) {
  std::set<uint32_t> ids;
  tree.walk([&](uint32_t i, int) {
    const CallNode& n = tree.node(i);
    if (n.kind == CallNode::Kind::Function &&
        is_named(func, tree.name(i), tree.names().short_of(tree.name(i), tree.module(i))))
      ids.insert(n.id);
    return true;
  });
  if (ids.empty())
    throw ViewError(std::string(option) + "=" + func + ": no function of that name was called " +
                    "(the names are those of `atrace report`)");
  return {ids.begin(), ids.end()};
}

std::string render_callers_text(const ReportInput& in, const CallTree& tree,
                                const std::string& callers, const std::string& callees,
                                const StackCallers* stacks) {
  std::ostringstream out;
  const auto all = tree.functions();
  bool first = true;
  for (bool want_callers : {true, false}) {
    const std::string& func = want_callers ? callers : callees;
    if (func.empty()) continue;
    for (uint32_t id : functions_named(tree, func, want_callers ? "--callers" : "--callees")) {
      const FunctionTotals* f = totals_of(all, id);
      uint32_t node = node_of(tree, id);
      if (!first) out << "\n";
      first = false;
      out << (want_callers ? "Callers of " : "Callees of ") << tree.label(node) << " (" << f->calls
          << (f->calls == 1 ? " call" : " calls") << ", total " << format_duration(f->total_ns)
          << ", self " << format_duration(f->self_ns) << "):\n";
      auto rows = rows_of(tree, id, want_callers);
      if (rows.empty()) out << "  none: it called no traced function\n";
      else print_rows(out, tree, rows, want_callers ? "Caller" : "Callee");
      if (want_callers && stacks) print_stack_callers(out, *stacks, id, f->calls);
    }
  }
  out << "\nCalls, Total, Self: the calls along that caller -> callee pair and their time";
  if (in.profile.lost_events)
    out << "\n" << in.profile.lost_events << " events lost: figures may be incomplete";
  out << "\n";
  return out.str();
}

std::string render_callers_json(const ReportInput& in, const ReportOptions& opt,
                                const CallTree& tree, const std::string& callers,
                                const std::string& callees, const StackCallers* stacks) {
  const auto all = tree.functions();
  json doc = json::parse(render_json(in, opt));
  if (!callers.empty()) doc["callers"] = view_json(tree, all, callers, "--callers", true, stacks);
  if (!callees.empty()) doc["callees"] = view_json(tree, all, callees, "--callees", false, nullptr);
  return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace atrace::analysis
