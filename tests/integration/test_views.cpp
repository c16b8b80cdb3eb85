// The report views (--tree, --callers, --callees, --diff) and the call-graph
// exports (folded, callgrind, dot) on real recordings of target_c, whose
// call counts and call graph are known (outer -> middle x N -> leaf x 3,
// sleeper x 3 from main), checked against the report's own per-function
// numbers and read by their real consumers: callgrind_annotate (valgrind)
// and dot (graphviz).
#include <algorithm>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "tests/integration/fixture.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

using nlohmann::json;

struct Sums {
  long long calls = 0, total = 0, self = 0;
};

// Per-function sums over a JSON tree, with the profile's recursion rule
// (a node's total counts only without an ancestor of the same function).
void sum_tree(const json& node, std::map<std::string, Sums>& out,
              std::multiset<std::string>& open) {
  for (const auto& c : node["children"]) {
    bool fn = c.contains("name");
    std::string name = fn ? c["name"].get<std::string>() : "";
    if (fn) {
      Sums& s = out[name];
      s.calls += c["calls"].get<long long>();
      s.self += c["self_ns"].get<long long>();
      if (!open.count(name)) s.total += c["total_ns"].get<long long>();
      open.insert(name);
    }
    sum_tree(c, out, open);
    if (fn) open.erase(open.find(name));
  }
}

// The node of the tree at a path of names ("outer/middle/leaf").
const json* tree_node(const json& tree, const std::string& path) {
  const json* at = &tree;
  std::stringstream parts(path);
  for (std::string name; std::getline(parts, name, '/');) {
    const json* next = nullptr;
    for (const auto& c : (*at)["children"])
      if (c.value("name", "") == name) next = &c;
    if (!next) return nullptr;
    at = next;
  }
  return at;
}

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) n++;
  return n;
}

bool have(const char* tool) {
  return run({"/bin/sh", "-c", std::string("command -v ") + tool}).exited(0);
}

class Views : public IntegrationTest {
 protected:
  // target_c N, its four functions traced, with every kernel group.
  std::string record_c(const std::string& name, int n) {
    std::string out = file(name);
    Result r =
        record(out, "leaf,middle,outer,sleeper", {Paths::target_c, std::to_string(n), tag_arg()},
               {"--kernel=all", "--filter-min-calls=1000"});
    EXPECT_TRUE(r.exited(0)) << r.describe();
    return out;
  }
  Result atrace(std::vector<std::string> args) {
    args.insert(args.begin(), Paths::atrace);
    return run(args);
  }
  json parse(const Result& r) {
    EXPECT_TRUE(r.exited(0)) << r.describe();
    try {
      return json::parse(r.out);
    } catch (const json::exception& e) {
      ADD_FAILURE() << e.what() << "\n" << r.describe();
      return json::object();
    }
  }
};

// The consumers must be there; in CI their absence is a failure.
#define REQUIRE_TOOL(tool)                                                        \
  do {                                                                            \
    if (!have(tool)) {                                                            \
      if (in_ci()) FAIL() << tool << " is not installed (make deps installs it)"; \
      GTEST_SKIP() << tool << " is not installed (make deps installs it)";        \
    }                                                                             \
  } while (0)

TEST_F(Views, TreeNumbersAreTheReportsPerFunctionNumbers) {
  std::string data = record_c("c.data", 100);
  json rep = parse(atrace({"report", "-i", data, "--tree", "--format=json"}));
  ASSERT_TRUE(rep.contains("tree")) << rep.dump();
  const json& tree = rep["tree"];
  EXPECT_EQ(tree["hidden"], 0);

  // The known shape: outer -> middle -> leaf, sleeper beside it.
  const json* leaf = tree_node(tree, "outer/middle/leaf");
  ASSERT_NE(leaf, nullptr) << tree.dump(1);
  EXPECT_EQ((*leaf)["calls"], 300);
  EXPECT_EQ((*leaf)["children"].size(), 0u);
  EXPECT_EQ((*tree_node(tree, "outer/middle"))["calls"], 100);
  EXPECT_EQ((*tree_node(tree, "outer"))["calls"], 1);
  const json* sleeper = tree_node(tree, "sleeper");
  ASSERT_NE(sleeper, nullptr);
  EXPECT_EQ((*sleeper)["calls"], 3);
  // Three 20 ms sleeps: off-CPU, inside nanosleep.
  EXPECT_GE((*sleeper)["offcpu_ns"].get<long long>(), 55'000'000);
  EXPECT_GE((*sleeper)["syscall_ns"].get<long long>(), 59'000'000);
  EXPECT_EQ(tree["children"].size(), 2u) << "only outer and sleeper are top-level";

  // Every function's calls, total and self equal the report's.
  std::map<std::string, Sums> sums;
  std::multiset<std::string> open;
  sum_tree(tree, sums, open);
  ASSERT_EQ(sums.size(), rep["functions"].size());
  for (const auto& f : rep["functions"]) {
    const Sums& s = sums[f["name"].get<std::string>()];
    EXPECT_EQ(s.calls, f["calls"].get<long long>()) << f["name"];
    EXPECT_EQ(s.total, f["total_ns"].get<long long>()) << f["name"];
    EXPECT_EQ(s.self, f["self_ns"].get<long long>()) << f["name"];
  }
  // And the parents' self times are their totals minus their children's.
  const json* middle = tree_node(tree, "outer/middle");
  EXPECT_EQ((*middle)["self_ns"].get<long long>(),
            (*middle)["total_ns"].get<long long>() - (*leaf)["total_ns"].get<long long>());
}

// Real recursion: deep(5) -> deep(4) -> ... -> deep(0), each calling hot()
// once, 4 times over. Each level is a node of its own; added up with the
// outermost rule they are the report's numbers.
TEST_F(Views, RecursionTreeMatchesTheReport) {
  std::string data = file("deep.data");
  Result r =
      record(data, "deep,hot", {Paths::target_filter, "4", "--recurse=5", "--work=0", tag_arg()},
             {"--filter=off"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  json rep = parse(atrace({"report", "-i", data, "--tree", "--format=json"}));
  ASSERT_EQ(calls_of(rep, "deep"), 24) << rep["functions"].dump();
  std::string path = "deep";
  for (int level = 0; level < 6; level++, path += "/deep") {
    const json* n = tree_node(rep["tree"], path);
    ASSERT_NE(n, nullptr) << path << "\n" << rep["tree"].dump(1);
    EXPECT_EQ((*n)["calls"], 4) << path;
    const json* hot = tree_node(rep["tree"], path + "/hot");
    ASSERT_NE(hot, nullptr) << path;
    EXPECT_EQ((*hot)["calls"], 4) << path;
  }
  EXPECT_EQ(tree_node(rep["tree"], path), nullptr) << "no seventh level";
  std::map<std::string, Sums> sums;
  std::multiset<std::string> open;
  sum_tree(rep["tree"], sums, open);
  for (const auto& f : rep["functions"]) {
    const Sums& s = sums[f["name"].get<std::string>()];
    EXPECT_EQ(s.calls, f["calls"].get<long long>()) << f["name"];
    EXPECT_EQ(s.total, f["total_ns"].get<long long>()) << f["name"];
    EXPECT_EQ(s.self, f["self_ns"].get<long long>()) << f["name"];
  }
  // deep's callers: untraced main (4 calls) and deep itself (20).
  json callers = parse(atrace({"report", "-i", data, "--callers=deep", "--format=json"}));
  std::map<std::string, long long> by;
  for (const auto& row : callers["callers"][0]["callers"]) by[row["name"]] = row["calls"];
  EXPECT_EQ(by, (std::map<std::string, long long>{{"(no traced caller)", 4}, {"deep", 20}}));
}

TEST_F(Views, TreeTextAndPruning) {
  std::string data = record_c("c.data", 50);
  Result full = atrace({"report", "-i", data, "--tree"});
  ASSERT_TRUE(full.exited(0)) << full.describe();
  EXPECT_TRUE(std::regex_search(
      full.out, std::regex(R"(\n *1 .* outer\n *50 .*   middle\n *150 .*     leaf\n)")))
      << full.out;
  EXPECT_NE(full.out.find("Off-CPU"), std::string::npos) << "kernel columns with kernel events";

  Result shallow = atrace({"report", "-i", data, "--tree", "--depth=2"});
  ASSERT_TRUE(shallow.exited(0)) << shallow.describe();
  EXPECT_NE(shallow.out.find("middle"), std::string::npos) << shallow.out;
  EXPECT_EQ(shallow.out.find("leaf"), std::string::npos) << shallow.out;
  EXPECT_NE(shallow.out.find("1 call path deeper than 2 levels not shown"), std::string::npos)
      << shallow.out;

  // The sleeps (60 ms) dwarf outer's calls: above 50 %, sleeper alone.
  json rep = parse(atrace({"report", "-i", data, "--tree", "--min-pct=50", "--format=json"}));
  ASSERT_EQ(rep["tree"]["children"].size(), 1u) << rep["tree"].dump(1);
  EXPECT_EQ(rep["tree"]["children"][0]["name"], "sleeper");
  EXPECT_EQ(rep["tree"]["hidden"], 3);  // outer, middle, leaf
  EXPECT_EQ(rep["tree"]["min_pct"], 50.0);

  // Per thread: one Thread node holding the same calls.
  json per = parse(atrace({"report", "-i", data, "--tree", "--threads", "--format=json"}));
  ASSERT_EQ(per["tree"]["children"].size(), 1u) << per["tree"].dump(1);
  const json& th = per["tree"]["children"][0];
  EXPECT_EQ(th["thread"], per["pid"]);
  EXPECT_EQ((*tree_node(th, "outer/middle/leaf"))["calls"], 150);
}

TEST_F(Views, TreePerThreadOnFourWorkers) {
  std::string data = file("threads.data");
  Result r =
      record(data, "worker_step", {Paths::target_threads, "500", tag_arg()}, {"--filter=off"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  json merged = parse(atrace({"report", "-i", data, "--tree", "--format=json"}));
  ASSERT_EQ(merged["tree"]["children"].size(), 1u) << merged["tree"].dump(1);
  EXPECT_EQ(merged["tree"]["children"][0]["calls"], 4 * 500);

  json per = parse(atrace({"report", "-i", data, "--tree", "--threads", "--format=json"}));
  std::set<std::string> names;
  for (const auto& th : per["tree"]["children"]) {
    ASSERT_EQ(th["children"].size(), 1u) << th.dump(1);
    EXPECT_EQ(th["children"][0]["name"], "worker_step");
    EXPECT_EQ(th["children"][0]["calls"], 500);
    EXPECT_EQ(th["calls"], 500);
    names.insert(th["thread_name"].get<std::string>());
  }
  EXPECT_EQ(names, (std::set<std::string>{"worker0", "worker1", "worker2", "worker3"}));

  // Folded stacks per thread: "worker2-TID;worker_step N".
  Result f = atrace({"convert", "-i", data, "--to=folded", "--weight=calls", "--threads"});
  ASSERT_TRUE(f.exited(0)) << f.describe();
  std::istringstream in(f.out);
  int lines = 0;
  for (std::string l; std::getline(in, l); lines++)
    EXPECT_TRUE(std::regex_match(l, std::regex(R"(worker[0-3]-\d+;worker_step 500)"))) << l;
  EXPECT_EQ(lines, 4) << f.out;
}

TEST_F(Views, CallersAndCalleesAreExact) {
  std::string data = record_c("c.data", 100);
  json rep =
      parse(atrace({"report", "-i", data, "--callers=leaf", "--callees=middle", "--format=json"}));
  ASSERT_EQ(rep["callers"].size(), 1u) << rep.dump(1);
  const json& of_leaf = rep["callers"][0];
  EXPECT_EQ(of_leaf["name"], "leaf");
  EXPECT_EQ(of_leaf["calls"], 300);
  ASSERT_EQ(of_leaf["callers"].size(), 1u);
  EXPECT_EQ(of_leaf["callers"][0]["name"], "middle");
  EXPECT_EQ(of_leaf["callers"][0]["calls"], 300);
  EXPECT_EQ(of_leaf["callers"][0]["total_ns"], function_field(rep, "leaf", "total_ns"));

  ASSERT_EQ(rep["callees"].size(), 1u);
  const json& of_middle = rep["callees"][0];
  ASSERT_EQ(of_middle["callees"].size(), 1u);
  EXPECT_EQ(of_middle["callees"][0]["name"], "leaf");
  EXPECT_EQ(of_middle["callees"][0]["calls"], 300);
  EXPECT_EQ(of_middle["callees"][0]["self_ns"], function_field(rep, "leaf", "self_ns"));

  // outer and sleeper: called by no traced function (main is not traced).
  Result top = atrace({"report", "-i", data, "--callers=sleeper", "--callees=outer"});
  ASSERT_TRUE(top.exited(0)) << top.describe();
  EXPECT_TRUE(std::regex_search(
      top.out, std::regex(R"(Callers of sleeper \(3 calls.*\n.*\n +3 .* \(no traced caller\)\n)")))
      << top.out;
  EXPECT_TRUE(std::regex_search(
      top.out, std::regex(R"(Callees of outer \(1 call,.*\n.*\n +100 .* middle\n)")))
      << top.out;
  Result none = atrace({"report", "-i", data, "--callees=leaf"});
  ASSERT_TRUE(none.exited(0)) << none.describe();
  EXPECT_NE(none.out.find("none: it called no traced function"), std::string::npos) << none.out;

  Result bad = atrace({"report", "-i", data, "--callers=no_such_function"});
  EXPECT_NE(expect_one_error_line(bad).find("--callers=no_such_function"), std::string::npos);
}

TEST_F(Views, DiffAgainstItselfAndADoubledWorkload) {
  std::string one = record_c("one.data", 100);
  std::string two = record_c("two.data", 200);

  json same = parse(atrace({"report", "-i", one, "--diff=" + one, "--format=json"}));
  ASSERT_EQ(same["functions"].size(), 4u) << same.dump(1);
  for (const auto& f : same["functions"])
    for (const char* k : {"calls", "total_ns", "self_ns"}) {
      EXPECT_EQ(f[k]["change"], 0) << f.dump();
      EXPECT_EQ(f[k]["change_pct"], 0.0) << f.dump();
    }
  Result same_text = atrace({"report", "-i", one, "--diff=" + one});
  ASSERT_TRUE(same_text.exited(0)) << same_text.describe();
  EXPECT_NE(same_text.out.find("0 of 4 functions changed"), std::string::npos) << same_text.out;

  json diff =
      parse(atrace({"report", "-i", one, "--diff=" + two, "--format=json", "--sort=calls"}));
  std::map<std::string, json> by_name;
  for (const auto& f : diff["functions"]) by_name[f["name"].get<std::string>()] = f;
  EXPECT_EQ(by_name["leaf"]["calls"]["base"], 300);
  EXPECT_EQ(by_name["leaf"]["calls"]["other"], 600);
  EXPECT_EQ(by_name["leaf"]["calls"]["change"], 300);
  EXPECT_EQ(by_name["leaf"]["calls"]["change_pct"], 100.0);
  EXPECT_EQ(by_name["middle"]["calls"]["other"], 2 * by_name["middle"]["calls"]["base"].get<int>());
  EXPECT_EQ(by_name["outer"]["calls"]["change"], 0);
  EXPECT_EQ(by_name["sleeper"]["calls"]["change"], 0);
  // Sorted by the largest change of calls: leaf, then middle.
  EXPECT_EQ(diff["functions"][0]["name"], "leaf");
  EXPECT_EQ(diff["functions"][1]["name"], "middle");
  EXPECT_EQ(diff["base"]["file"], one);
  EXPECT_EQ(diff["other"]["file"], two);

  Result text = atrace({"report", "-i", one, "--diff=" + two, "--sort=calls"});
  ASSERT_TRUE(text.exited(0)) << text.describe();
  EXPECT_TRUE(
      std::regex_search(text.out, std::regex(R"(\n300 -> 600 +\+300 \(\+100\.0%\) .* leaf\n)")))
      << text.out;

  Result bad = atrace({"report", "-i", one, "--diff=" + file("missing.data")});
  expect_one_error_line(bad);
}

TEST_F(Views, FoldedSumsToTheReportsSelfTimes) {
  std::string data = record_c("c.data", 100);
  json rep = parse(atrace({"report", "-i", data, "--format=json"}));
  for (const char* weight : {"time", "calls"}) {
    Result r = atrace({"convert", "-i", data, "--to=folded", std::string("--weight=") + weight});
    ASSERT_TRUE(r.exited(0)) << r.describe();
    EXPECT_TRUE(r.err.empty()) << r.err;
    // flamegraph.pl's grammar: frames joined by ';', a space, an integer.
    std::regex line(R"(([^;\n]+(;[^;\n]+)*) (\d+))");
    std::map<std::string, long long> per_leaf_frame;
    std::set<std::string> stacks;
    std::istringstream in(r.out);
    for (std::string l; std::getline(in, l);) {
      std::smatch m;
      ASSERT_TRUE(std::regex_match(l, m, line)) << "not folded: '" << l << "'";
      EXPECT_TRUE(stacks.insert(m[1]).second) << "stack twice: " << l;
      std::string stack = m[1];
      per_leaf_frame[stack.substr(stack.rfind(';') + 1)] += std::stoll(m[3]);
    }
    EXPECT_TRUE(stacks.count("outer;middle;leaf")) << r.out;
    for (const auto& f : rep["functions"]) {
      const char* field = std::string(weight) == "time" ? "self_ns" : "calls";
      EXPECT_EQ(per_leaf_frame[f["name"].get<std::string>()], f[field].get<long long>())
          << weight << " " << f["name"];
    }
  }
}

TEST_F(Views, CallgrindAnnotateReadsItAndItsTotalsMatch) {
  REQUIRE_TOOL("callgrind_annotate");
  std::string data = record_c("c.data", 100);
  std::string out = file("callgrind.out.atrace");
  Result conv = atrace({"convert", "-i", data, "--to=callgrind", "-o", out});
  ASSERT_TRUE(conv.exited(0)) << conv.describe();
  json rep = parse(atrace({"report", "-i", data, "--format=json"}));
  long long self_sum = 0;
  for (const auto& f : rep["functions"]) self_sum += f["self_ns"].get<long long>();

  auto number = [](std::string s) {
    s.erase(std::remove(s.begin(), s.end(), ','), s.end());
    return std::stoll(s);
  };
  // The figure of `name` (a function, or PROGRAM TOTALS) in an output that
  // shows one event: "  8,077,239 (11.66%)  ???:leaf [/path]".
  auto figure = [&](const std::string& text, const std::string& name) -> long long {
    std::smatch m;
    std::regex line(R"((?:^|\n)\s*([\d,]+)(?: \([^)]*\))?\s+(?:\S+:)?)" + name + R"((?: |\n))");
    if (!std::regex_search(text, m, line)) {
      ADD_FAILURE() << "no line for " << name << " in\n" << text;
      return -1;
    }
    return number(m[1]);
  };

  // Exclusive (self) costs: the total line and one line per function, for
  // time and for kernel events.
  const std::pair<const char*, const char*> events[] = {
      {"Time", "self_ns"}, {"OffCPU", "self_offcpu_ns"}, {"Syscalls", "self_syscalls"}};
  for (const auto& [event, field] : events) {
    Result ann =
        run({"callgrind_annotate", "--threshold=100", std::string("--show=") + event, out});
    ASSERT_TRUE(ann.exited(0)) << ann.describe();
    EXPECT_TRUE(ann.err.empty()) << ann.err;
    long long sum = 0;
    for (const auto& f : rep["functions"]) {
      EXPECT_EQ(figure(ann.out, f["name"]), f[field].get<long long>()) << event << " " << f["name"];
      sum += f[field].get<long long>();
    }
    if (sum) {
      EXPECT_EQ(figure(ann.out, "PROGRAM TOTALS"), sum) << event;
    }
    if (std::string(event) == "Time") {
      EXPECT_EQ(sum, self_sum);
    }
  }
  // Inclusive: from the call lines (outer: its self plus its callees').
  Result inc =
      run({"callgrind_annotate", "--threshold=100", "--show=Time", "--inclusive=yes", out});
  ASSERT_TRUE(inc.exited(0)) << inc.describe();
  for (const char* name : {"outer", "middle", "leaf", "sleeper"})
    EXPECT_EQ(figure(inc.out, name), function_field(rep, name, "total_ns")) << name;
  // Call counts: the caller -> callee edges of the call-tree output.
  Result calls = run({"callgrind_annotate", "--threshold=100", "--tree=caller", out});
  ASSERT_TRUE(calls.exited(0)) << calls.describe();
  EXPECT_TRUE(std::regex_search(calls.out, std::regex(R"(< \S+:middle \(300x\))"))) << calls.out;
  EXPECT_TRUE(std::regex_search(calls.out, std::regex(R"(< \S+:outer \(100x\))"))) << calls.out;
}

TEST_F(Views, DotRendersWithoutWarnings) {
  REQUIRE_TOOL("dot");
  std::string data = record_c("c.data", 100);
  for (std::vector<std::string> extra :
       {std::vector<std::string>{}, {"--weight=calls"}, {"--min-pct=50"}}) {
    std::vector<std::string> args = {"convert", "-i", data, "--to=dot", "-o", file("g.dot")};
    args.insert(args.end(), extra.begin(), extra.end());
    Result conv = atrace(args);
    ASSERT_TRUE(conv.exited(0)) << conv.describe();
    Result svg = run({"dot", "-Tsvg", file("g.dot"), "-o", file("g.svg")});
    EXPECT_TRUE(svg.exited(0)) << svg.describe();
    EXPECT_TRUE(svg.err.empty()) << "dot warned: " << svg.err;
    std::ifstream in(file("g.svg"));
    std::string text((std::istreambuf_iterator<char>(in)), {});
    std::ifstream din(file("g.dot"));
    std::string dot((std::istreambuf_iterator<char>(din)), {});
    EXPECT_NE(text.find("<svg"), std::string::npos);
    EXPECT_NE(text.find("sleeper"), std::string::npos);
    if (extra.empty()) {
      EXPECT_NE(text.find("300 calls"), std::string::npos) << "middle -> leaf edge";
      EXPECT_EQ(occurrences(dot, "->"), 2u) << "outer->middle, middle->leaf\n" << dot;
    } else if (extra[0] == "--min-pct=50") {
      // sleeper (the 60 ms of sleep) alone weighs over half the time.
      EXPECT_EQ(text.find("leaf"), std::string::npos) << dot;
      EXPECT_EQ(dot.find("->"), std::string::npos) << dot;
    }
  }
}

}  // namespace
}  // namespace atrace::it
