// The report views built on the call tree (report --tree with its pruning,
// --callers, --callees, --diff) and the call-graph exports (folded,
// callgrind, dot), on hand-made event sequences whose numbers are known.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <sstream>

#include "analysis/call_tree.h"
#include "analysis/profile.h"
#include "output/export_graph.h"
#include "output/render_views.h"

using namespace atrace;
using analysis::CallTree;
using formats::EventKind;
using json = nlohmann::json;

namespace {

enum { MAIN = 1, A = 2, B = 3, C = 4 };

std::vector<formats::ProbeInfo> probes() {
  std::vector<formats::ProbeInfo> out;
  const char* names[] = {"", "main", "a", "int ns::b<int>(int, long)", "c"};
  for (uint32_t id = 1; id <= 4; id++) {
    formats::ProbeInfo p;
    p.id = id;
    p.name = names[id];
    p.module = id == C ? "libc.so.6" : "demo";
    p.path = id == C ? "/lib/libc.so.6" : "/bin/demo";
    out.push_back(p);
  }
  return out;
}

struct Seq {
  uint32_t tid = 100;
  std::vector<formats::Event> events;
  Seq& E(uint64_t ts, uint32_t id) { return push(ts, EventKind::FuncEntry, id); }
  Seq& X(uint64_t ts, uint32_t id) { return push(ts, EventKind::FuncExit, id); }
  Seq& push(uint64_t ts, EventKind k, uint32_t id) {
    formats::Event e;
    e.ts = ts;
    e.pid = 100;
    e.tid = tid;
    e.id = id;
    e.kind = k;
    events.push_back(e);
    return *this;
  }
};

// main [0,100]: a [10,40] calls c [20,30]; b [50,90] calls c [60,80].
Seq two_callers() {
  Seq s;
  s.E(0, MAIN).E(10, A).E(20, C).X(30, C).X(40, A);
  s.E(50, B).E(60, C).X(80, C).X(90, B).X(100, MAIN);
  return s;
}

// What a report is built from, kept together.
struct Trace {
  formats::TraceHeader header;
  analysis::Profile profile;
  std::vector<std::string> warnings;
  CallTree tree;
  analysis::ReportInput in() const { return {header, profile, warnings}; }
};

Trace trace(const Seq& s) {
  Trace t;
  t.header.atrace_version = "0.1.0";
  t.header.target_command = "/bin/demo 3";
  t.header.target_pid = 100;
  analysis::ProfileBuilder pb(probes());
  analysis::CallTreeBuilder tb(t.header, probes());
  for (const auto& e : s.events) {
    pb.add(e);
    tb.add(e);
  }
  t.profile = pb.finish(0, {}, {});
  t.tree = tb.finish(0, {});
  return t;
}

std::string folded(const CallTree& t, analysis::GraphWeight w) {
  analysis::GraphExportOptions opt;
  opt.weight = w;
  std::ostringstream out;
  analysis::write_folded(t, opt, out);
  return out.str();
}

}  // namespace

TEST(TreeView, TextShowsEveryPathIndented) {
  Trace t = trace(two_callers());
  std::string out = analysis::render_tree_text(t.in(), t.tree, {});
  EXPECT_NE(out.find("Call tree of /bin/demo 3 (pid 100): 100 ns in traced calls, 5 call paths"),
            std::string::npos)
      << out;
  // Columns: Calls, Total, %, Self, Function (indented by depth).
  EXPECT_NE(out.find("    1  100 ns  100.0%  30 ns  main\n"), std::string::npos) << out;
  EXPECT_NE(out.find("    1   40 ns   40.0%  20 ns    ns::b\n"), std::string::npos) << out;
  EXPECT_NE(out.find("    1   20 ns   20.0%  20 ns      c [libc.so.6]\n"), std::string::npos)
      << out;
  EXPECT_NE(out.find("    1   10 ns   10.0%  10 ns      c [libc.so.6]\n"), std::string::npos)
      << out;
  EXPECT_LT(out.find("ns::b"), out.find("  a\n")) << "larger total first";
  EXPECT_EQ(out.find("not shown"), std::string::npos) << out;
  EXPECT_EQ(out.find("Off-CPU"), std::string::npos) << "no kernel columns without kernel events";
}

TEST(TreeView, DepthAndMinPctPrune) {
  Trace t = trace(two_callers());
  std::string one = analysis::render_tree_text(t.in(), t.tree, {1, 0});
  EXPECT_NE(one.find("main\n"), std::string::npos) << one;
  EXPECT_EQ(one.find("  a\n"), std::string::npos) << one;
  EXPECT_NE(one.find("4 call paths deeper than 1 level not shown"), std::string::npos) << one;

  // 25 %: b (40) and a (30) stay, the c under each (20, 10) go.
  std::string pct = analysis::render_tree_text(t.in(), t.tree, {0, 25});
  EXPECT_NE(pct.find("  a\n"), std::string::npos) << pct;
  EXPECT_EQ(pct.find("c [libc.so.6]"), std::string::npos) << pct;
  EXPECT_NE(pct.find("2 call paths under 25% of the time not shown"), std::string::npos) << pct;

  // A shown node keeps its numbers: main's self is still 30 of 100.
  EXPECT_NE(pct.find("    1  100 ns  100.0%  30 ns  main\n"), std::string::npos) << pct;

  // 15 %: only a's c (10 %) goes.
  std::string fifteen = analysis::render_tree_text(t.in(), t.tree, {0, 15});
  EXPECT_NE(fifteen.find("1 call path under 15% of the time not shown"), std::string::npos)
      << fifteen;
}

TEST(TreeView, JsonTreeMember) {
  Trace t = trace(two_callers());
  json doc = json::parse(analysis::render_tree_json(t.in(), {}, t.tree, {0, 25}));
  EXPECT_EQ(doc["report_version"], 1);
  ASSERT_EQ(doc["functions"].size(), 4u) << "the report's document, plus the tree";
  const json& tree = doc["tree"];
  EXPECT_EQ(tree["total_ns"], 100);
  EXPECT_EQ(tree["hidden"], 2);
  EXPECT_EQ(tree["min_pct"], 25.0);
  ASSERT_EQ(tree["children"].size(), 1u);
  const json& main = tree["children"][0];
  EXPECT_EQ(main["name"], "main");
  EXPECT_EQ(main["module"], "demo");
  EXPECT_EQ(main["self_ns"], 30);
  ASSERT_EQ(main["children"].size(), 2u);
  EXPECT_EQ(main["children"][0]["name"], "int ns::b<int>(int, long)");
  EXPECT_EQ(main["children"][0]["short_name"], "ns::b");
  EXPECT_EQ(main["children"][0]["children"].size(), 0u);
  EXPECT_EQ(main["children"][1]["total_ns"], 30);

  json all = json::parse(analysis::render_tree_json(t.in(), {}, t.tree, {}));
  EXPECT_EQ(all["tree"]["hidden"], 0);
  EXPECT_EQ(all["tree"]["children"][0]["children"][1]["children"][0]["name"], "c");
}

TEST(CallersView, RowsPerCallerAndCallee) {
  Trace t = trace(two_callers());
  std::string out = analysis::render_callers_text(t.in(), t.tree, "c", "main");
  EXPECT_NE(out.find("Callers of c [libc.so.6] (2 calls, total 30 ns, self 30 ns):\n"
                     "  Calls  Total   Self  Caller\n"
                     "      1  20 ns  20 ns  ns::b\n"
                     "      1  10 ns  10 ns  a\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("Callees of main (1 call, total 100 ns, self 30 ns):\n"
                     "  Calls  Total   Self  Callee\n"
                     "      1  40 ns  20 ns  ns::b\n"
                     "      1  30 ns  20 ns  a\n"),
            std::string::npos)
      << out;
  // A C++ name without its return type and parameters, its short name, a
  // glob: all name the one function.
  for (const char* name : {"ns::b<int>", "ns::b", "ns::*", "*b", "int ns::b<int>(int, long)"}) {
    std::string b = analysis::render_callers_text(t.in(), t.tree, name, "");
    EXPECT_NE(b.find("Callers of ns::b (1 call"), std::string::npos) << name << "\n" << b;
    EXPECT_NE(b.find("main\n"), std::string::npos) << b;
  }
  std::string top = analysis::render_callers_text(t.in(), t.tree, "main", "");
  EXPECT_NE(top.find("      1  100 ns  30 ns  (no traced caller)\n"), std::string::npos) << top;
  EXPECT_THROW(analysis::render_callers_text(t.in(), t.tree, "nope", ""), analysis::ViewError);
  EXPECT_THROW(analysis::render_callers_text(t.in(), t.tree, "", "ns::c*"), analysis::ViewError);
}

TEST(CallersView, RecursionListsItselfAndJson) {
  // a [0,100] -> a [10,80] -> a [20,50] -> b [30,40]
  Seq s;
  s.E(0, A).E(10, A).E(20, A).E(30, B).X(40, B).X(50, A).X(80, A).X(100, A);
  Trace t = trace(s);
  json doc = json::parse(analysis::render_callers_json(t.in(), {}, t.tree, "a", "a"));
  ASSERT_EQ(doc["callers"].size(), 1u);
  const json& of = doc["callers"][0];
  EXPECT_EQ(of["calls"], 3);
  EXPECT_EQ(of["total_ns"], 100);  // outermost only
  ASSERT_EQ(of["callers"].size(), 2u);
  EXPECT_EQ(of["callers"][0]["name"], "(no traced caller)");
  EXPECT_EQ(of["callers"][0]["calls"], 1);
  EXPECT_EQ(of["callers"][1]["name"], "a");
  EXPECT_EQ(of["callers"][1]["calls"], 2);
  EXPECT_EQ(of["callers"][1]["total_ns"], 70 + 30);  // both inner levels
  const json& callees = doc["callees"][0]["callees"];
  ASSERT_EQ(callees.size(), 2u);
  EXPECT_EQ(callees[0]["name"], "a");
  EXPECT_EQ(callees[0]["calls"], 2);
  EXPECT_EQ(callees[1]["name"], "int ns::b<int>(int, long)");
  EXPECT_EQ(callees[1]["short_name"], "ns::b");
  EXPECT_EQ(callees[1]["module"], "demo");
  EXPECT_EQ(callees[1]["self_ns"], 10);
}

TEST(DiffView, ChangesSortedByTheLargest) {
  Trace base = trace(two_callers());
  // The same program with a called twice as long and c under b twice.
  Seq s;
  s.E(0, MAIN).E(10, A).E(20, C).X(30, C).X(70, A);
  s.E(80, B).E(90, C).X(110, C).E(115, C).X(135, C).X(140, B).X(150, MAIN);
  Trace other = trace(s);
  std::string bf = "one.data", of = "two.data";
  analysis::DiffInput in{base.in(), bf, other.in(), of};
  analysis::ReportOptions opt;
  opt.sort = analysis::SortKey::Calls;
  json doc = json::parse(analysis::render_diff_json(in, opt));
  EXPECT_EQ(doc["base"]["file"], "one.data");
  ASSERT_EQ(doc["functions"].size(), 4u);
  const json& c = doc["functions"][0];  // the only change of calls
  EXPECT_EQ(c["name"], "c");
  EXPECT_EQ(c["calls"]["base"], 2);
  EXPECT_EQ(c["calls"]["other"], 3);
  EXPECT_EQ(c["calls"]["change"], 1);
  EXPECT_DOUBLE_EQ(c["calls"]["change_pct"].get<double>(), 50.0);
  EXPECT_EQ(c["total_ns"]["change"], 50 - 30);

  opt.sort = analysis::SortKey::Total;
  doc = json::parse(analysis::render_diff_json(in, opt));
  EXPECT_EQ(doc["functions"][0]["name"], "main");  // +50 ns
  EXPECT_EQ(doc["functions"][0]["total_ns"]["change"], 50);
  EXPECT_EQ(doc["functions"][1]["name"], "a");  // +30 ns

  std::string text = analysis::render_diff_text(in, opt);
  EXPECT_NE(text.find("100 ns -> 150 ns"), std::string::npos) << text;
  EXPECT_NE(text.find(" +50 ns (+50.0%) "), std::string::npos) << text;
  EXPECT_NE(text.find("4 of 4 functions changed"), std::string::npos) << text;

  // Against itself: nothing changed, and a function only in one is "new".
  analysis::DiffInput same{base.in(), bf, base.in(), bf};
  std::string none = analysis::render_diff_text(same, opt);
  EXPECT_NE(none.find("0 of 4 functions changed"), std::string::npos) << none;
  Seq only_a;
  only_a.E(0, A).X(10, A);
  Trace small = trace(only_a);
  analysis::DiffInput grow{small.in(), bf, base.in(), of};
  json g = json::parse(analysis::render_diff_json(grow, opt));
  for (const auto& f : g["functions"])
    if (f["name"] == "main") {
      EXPECT_EQ(f["calls"]["base"], 0);
      EXPECT_TRUE(f["calls"]["change_pct"].is_null());
    }
  EXPECT_NE(analysis::render_diff_text(grow, opt).find("+1 (new)"), std::string::npos);
}

TEST(FoldedExport, OneLinePerPathSelfTimeOrCalls) {
  Trace t = trace(two_callers());
  EXPECT_EQ(folded(t.tree, analysis::GraphWeight::Time),
            "main 30\n"
            "main;ns::b 20\n"
            "main;ns::b;c [libc.so.6] 20\n"
            "main;a 20\n"
            "main;a;c [libc.so.6] 10\n");
  EXPECT_EQ(folded(t.tree, analysis::GraphWeight::Calls),
            "main 1\n"
            "main;ns::b 1\n"
            "main;ns::b;c [libc.so.6] 1\n"
            "main;a 1\n"
            "main;a;c [libc.so.6] 1\n");
}

TEST(FoldedExport, ThreadPrefixAndNoZeroLines) {
  Seq s;
  s.tid = 7;
  s.E(0, A).E(0, B).X(10, B).X(10, A);  // a has no self time
  analysis::CallTreeOptions opt;
  opt.per_thread = true;
  formats::TraceHeader h;
  analysis::CallTreeBuilder b(h, probes(), opt);
  for (const auto& e : s.events) b.add(e);
  formats::ThreadInfo th;
  th.tid = 7;
  th.name = "work;er";
  CallTree t = b.finish(0, {th});
  EXPECT_EQ(folded(t, analysis::GraphWeight::Time), "work,er-7;a;ns::b 10\n");
}

TEST(FoldedExport, LongNamesShowTheFullDemangledName) {
  Seq s;
  s.E(0, A).E(0, B).X(10, B).X(10, A);
  analysis::CallTreeOptions opt;
  opt.long_names = true;
  formats::TraceHeader h;
  analysis::CallTreeBuilder b(h, probes(), opt);
  for (const auto& e : s.events) b.add(e);
  CallTree t = b.finish(0, {});
  EXPECT_EQ(folded(t, analysis::GraphWeight::Time), "a;int ns::b<int>(int, long) 10\n");
}

TEST(CallgrindExport, SelfCostsCallsAndInclusiveCosts) {
  Trace t = trace(two_callers());
  std::ostringstream out;
  analysis::write_callgrind(t.tree, t.header, out);
  std::string s = out.str();
  EXPECT_EQ(s.rfind("# callgrind format\nversion: 1\ncreator: atrace 0.1.0\npid: 100\n"
                    "cmd: /bin/demo 3\npositions: line\n",
                    0),
            0u)
      << s;
  EXPECT_NE(s.find("\nevents: Time\n"), std::string::npos) << s;
  // main: self 30, calls a (1 call, 30 inclusive) and b (1, 40).
  EXPECT_NE(s.find("ob=(1) /bin/demo\nfl=(1) ???\nfn=(1) main\n0 30\n"
                   "cob=(1)\ncfl=(1)\ncfn=(2) a\ncalls=1 0\n0 30\n"
                   "cob=(1)\ncfl=(1)\ncfn=(3) ns::b\ncalls=1 0\n0 40\n"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("fn=(2)\n0 20\ncob=(2) /lib/libc.so.6\ncfl=(1)\ncfn=(4) c [libc.so.6]\ncalls=1 "
                   "0\n0 10\n"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("ob=(2)\nfl=(1)\nfn=(4)\n0 30\n"), std::string::npos) << "c's self: both calls";
}

TEST(DotExport, NodesEdgesAndPruning) {
  Trace t = trace(two_callers());
  analysis::GraphExportOptions opt;
  std::ostringstream all;
  analysis::write_dot(t.tree, opt, all);
  std::string s = all.str();
  EXPECT_EQ(s.rfind("digraph atrace {\n", 0), 0u);
  EXPECT_NE(s.find("f1 [label=\"main\\nself 30 ns (30.0%)\\ntotal 100 ns (100.0%)\\n1 call\""),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("f4 [label=\"c\\n[libc.so.6]\\nself 30 ns"), std::string::npos) << s;
  for (const char* e : {"f1 -> f2 ", "f1 -> f3 ", "f2 -> f4 ", "f3 -> f4 "})
    EXPECT_NE(s.find(e), std::string::npos) << e << "\n" << s;
  // main's self (30) is the largest with c's: both the hottest colour.
  EXPECT_NE(s.find("fillcolor=\"#cb181d\""), std::string::npos) << s;

  // 25 % of the time: a -> c (10 ns) goes; b -> c (20) too; c (30) stays.
  opt.min_pct = 25;
  std::ostringstream pruned;
  analysis::write_dot(t.tree, opt, pruned);
  std::string p = pruned.str();
  EXPECT_NE(p.find("f1 -> f2 "), std::string::npos) << p;
  EXPECT_EQ(p.find("f2 -> f4 "), std::string::npos) << p;
  EXPECT_EQ(p.find("f3 -> f4 "), std::string::npos) << p;
  EXPECT_NE(p.find("f4 [label"), std::string::npos) << p;

  // Names are quoted for DOT: quotes and backslashes escaped, bad UTF-8 gone.
  auto odd = probes();
  odd[0].name = "say\"hi\\\xff";
  analysis::CallTreeBuilder b(formats::TraceHeader{}, odd);
  Seq s1;
  s1.E(0, MAIN).X(5, MAIN);
  for (const auto& e : s1.events) b.add(e);
  std::ostringstream q;
  analysis::write_dot(b.finish(0, {}), {}, q);
  EXPECT_NE(q.str().find("label=\"say\\\"hi\\\\?\\n"), std::string::npos) << q.str();
}
