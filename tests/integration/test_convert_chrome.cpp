// atrace convert --to=chrome on real recordings: the file parses as JSON
// (nlohmann), every thread's intervals nest, and per function the X (and
// B/E) events add up to `atrace report --format=json`: as many intervals as
// calls; the outermost activations' durations (the report's recursion rule:
// a recursive function's total counts only activations not inside another
// of its own on the same thread) sum to total_ns; durations minus the
// directly nested calls' sum to self_ns. With kernel events, the system-call
// and off-CPU slices inside a function sum to its syscall_ns / offcpu_ns.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "tests/integration/convert_util.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

struct Interval {
  std::string name, cat;
  long long tid = 0;
  long long start = 0, end = 0;  // ns
  bool unfinished = false;
  int parent = -1;  // enclosing interval (any category), -1 for none
};

long long ns(const nlohmann::json& us) { return std::llround(us.get<double>() * 1000.0); }

class ChromeTrace {
 public:
  // Reads the file; records failures for anything malformed.
  explicit ChromeTrace(const std::string& path) {
    try {
      doc = nlohmann::json::parse(read_whole(path));
    } catch (const nlohmann::json::exception& e) {
      ADD_FAILURE() << path << " is not JSON: " << e.what();
      return;
    }
    if (!doc.contains("traceEvents") || !doc["traceEvents"].is_array()) {
      ADD_FAILURE() << "no traceEvents array";
      return;
    }
    for (const auto& e : doc["traceEvents"]) {
      const std::string ph = e.at("ph");
      if (ph == "X") {
        // "function,unfinished": the kind, then how it ended.
        std::string cat = e.at("cat");
        Interval iv{e.at("name"), cat.substr(0, cat.find(',')), e.at("tid"), ns(e.at("ts")), 0};
        iv.unfinished = cat.find(",unfinished") != std::string::npos;
        iv.end = iv.start + ns(e.at("dur"));
        // speedscope names a frame by its name and args: none on slices.
        if (e.contains("args")) ADD_FAILURE() << "a slice with args: " << e.dump();
        intervals.push_back(iv);
      } else if (ph == "B" || ph == "E") {
        ADD_FAILURE() << "a B/E event (every slice is an X): " << e.dump();
      } else if (ph == "M") {
        metadata[e.at("name").get<std::string>() + ":" +
                 std::to_string(e.at("tid").get<long long>())] = e.at("args").at("name");
      } else if (ph == "i") {
        instants.push_back(e);
      } else {
        ADD_FAILURE() << "unexpected phase: " << e.dump();
      }
    }
    link_parents();
  }

  // Every thread's intervals form a forest: each lies inside the one that
  // encloses its start.
  void link_parents() {
    std::vector<int> order(intervals.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    std::sort(order.begin(), order.end(), [&](int a, int b) {
      const Interval &x = intervals[a], &y = intervals[b];
      if (x.tid != y.tid) return x.tid < y.tid;
      if (x.start != y.start) return x.start < y.start;
      return x.end > y.end;  // same start: the longer one encloses
    });
    std::vector<int> stack;
    long long tid = -1;
    for (int i : order) {
      Interval& iv = intervals[i];
      EXPECT_LE(iv.start, iv.end) << iv.name;
      if (iv.tid != tid) stack.clear();
      tid = iv.tid;
      // Ended before this one began (touching ends are not nesting).
      while (!stack.empty() && intervals[stack.back()].end <= iv.start &&
             intervals[stack.back()].start < iv.start)
        stack.pop_back();
      if (!stack.empty()) {
        const Interval& p = intervals[stack.back()];
        if (iv.end > p.end) {
          ++crossings;
          ADD_FAILURE() << "tid " << iv.tid << ": " << iv.name << " [" << iv.start << ", " << iv.end
                        << "] overlaps " << p.name << " [" << p.start << ", " << p.end
                        << "] without nesting";
        }
        iv.parent = stack.back();
      }
      stack.push_back(i);
    }
  }

  // The nearest enclosing interval of category `cat`.
  int enclosing(int i, const std::string& cat) const {
    for (int p = intervals[i].parent; p >= 0; p = intervals[p].parent)
      if (intervals[p].cat == cat) return p;
    return -1;
  }

  struct Sums {
    long long calls = 0, total = 0, self = 0, unfinished = 0;
  };
  // Per function name: the numbers the report computes.
  std::map<std::string, Sums> function_sums() const {
    std::map<std::string, Sums> out;
    std::map<int, long long> children;
    for (size_t i = 0; i < intervals.size(); ++i) {
      if (intervals[i].cat != "function") continue;
      int p = enclosing(static_cast<int>(i), "function");
      if (p >= 0) children[p] += intervals[i].end - intervals[i].start;
    }
    for (size_t i = 0; i < intervals.size(); ++i) {
      const Interval& iv = intervals[i];
      if (iv.cat != "function") continue;
      Sums& s = out[iv.name];
      long long dur = iv.end - iv.start;
      s.calls++;
      s.self += std::max(0LL, dur - children[static_cast<int>(i)]);
      if (iv.unfinished) s.unfinished++;
      bool outermost = true;
      for (int p = iv.parent; p >= 0; p = intervals[p].parent)
        if (intervals[p].cat == "function" && intervals[p].name == iv.name) outermost = false;
      if (outermost) s.total += dur;
    }
    return out;
  }

  nlohmann::json doc;
  std::vector<Interval> intervals;
  std::vector<nlohmann::json> instants;
  std::map<std::string, std::string> metadata;  // "thread_name:TID" -> name
  int crossings = 0;
};

// Every function of the report, compared with the trace's sums.
void expect_matches_report(const ChromeTrace& chrome, const nlohmann::json& rep) {
  auto sums = chrome.function_sums();
  ASSERT_FALSE(rep["functions"].empty());
  for (const auto& f : rep["functions"]) {
    const std::string name = f["name"];
    SCOPED_TRACE(name);
    ASSERT_TRUE(sums.count(name)) << "no interval named " << name;
    const auto& s = sums.at(name);
    EXPECT_EQ(s.calls, f["calls"].get<long long>());
    EXPECT_EQ(s.total, f["total_ns"].get<long long>());
    EXPECT_EQ(s.self, f["self_ns"].get<long long>());
    EXPECT_EQ(s.unfinished, f["unfinished"].get<long long>());
  }
  EXPECT_EQ(sums.size(), rep["functions"].size());
}

class ConvertChrome : public IntegrationTest {};

TEST_F(ConvertChrome, CallsAndTimesMatchTheReport) {
  std::string trace = file("c.data"), json = file("c.json");
  Result r = record(trace, "leaf,middle,outer,sleeper", {Paths::target_c, "100", tag_arg()},
                    {"--kernel=+syscalls", "--filter-min-calls=1000"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  ASSERT_TRUE(convert(trace, "chrome", json));
  ChromeTrace chrome(json);
  ASSERT_FALSE(chrome.intervals.empty());
  EXPECT_EQ(chrome.crossings, 0);
  auto rep = report_json(trace);
  ASSERT_TRUE(rep);
  expect_matches_report(chrome, *rep);
  auto sums = chrome.function_sums();
  EXPECT_EQ(sums["leaf"].calls, 300);  // the target's own count
  EXPECT_EQ(sums["middle"].calls, 100);

  // Names for the viewer's tracks, and the header in otherData.
  const long long pid = printed_count(r.out, "pid").value_or(-1);
  EXPECT_EQ(chrome.metadata["thread_name:" + std::to_string(pid)], "target_c");
  EXPECT_EQ(chrome.metadata["process_name:" + std::to_string(pid)], "target_c");
  EXPECT_EQ(chrome.doc["otherData"]["clock"], "CLOCK_MONOTONIC");
  EXPECT_EQ(chrome.doc["otherData"]["lost_events"], 0);
  // Kernel events: system calls as slices, faults as instants.
  EXPECT_TRUE(std::any_of(chrome.intervals.begin(), chrome.intervals.end(),
                          [](const Interval& iv) { return iv.name == "syscall:clock_nanosleep"; }));
  EXPECT_TRUE(std::any_of(chrome.instants.begin(), chrome.instants.end(),
                          [](const nlohmann::json& e) { return e["name"] == "fault"; }));
}

TEST_F(ConvertChrome, RecursionCountsOutermostActivationsLikeTheReport) {
  std::string trace = file("deep.data"), json = file("deep.json");
  // 20 iterations of deep(5): 6 nested activations of deep each.
  Result r =
      record(trace, "deep,hot", {Paths::target_filter, "20", "--recurse=5", "--work=0", tag_arg()},
             {"--filter=off"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  ASSERT_TRUE(convert(trace, "chrome", json));
  ChromeTrace chrome(json);
  EXPECT_EQ(chrome.crossings, 0);
  auto rep = report_json(trace);
  ASSERT_TRUE(rep);
  expect_matches_report(chrome, *rep);
  auto sums = chrome.function_sums();
  ASSERT_TRUE(sums.count("deep"));
  EXPECT_EQ(sums["deep"].calls, printed_count(r.out, "deep").value_or(-1));
  // The sum over every activation counts the nested ones several times:
  // well above the total, which is what the recursion rule is for.
  long long all = 0;
  for (const auto& iv : chrome.intervals)
    if (iv.name == "deep") all += iv.end - iv.start;
  EXPECT_GT(all, 2 * sums["deep"].total);
}

TEST_F(ConvertChrome, FourThreadsEachOnItsOwnTrack) {
  std::string trace = file("t.data"), json = file("t.json");
  Result r =
      record(trace, "worker_step", {Paths::target_threads, "2000", tag_arg()}, {"--filter=off"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  ASSERT_TRUE(convert(trace, "chrome", json));
  ChromeTrace chrome(json);
  EXPECT_EQ(chrome.crossings, 0);
  std::map<long long, long long> per_thread;
  for (const auto& iv : chrome.intervals)
    if (iv.cat == "function") per_thread[iv.tid]++;
  ASSERT_EQ(per_thread.size(), 4u);
  for (const auto& [tid, n] : per_thread) EXPECT_EQ(n, 2000) << tid;
  auto rep = report_json(trace);
  ASSERT_TRUE(rep);
  expect_matches_report(chrome, *rep);
}

TEST_F(ConvertChrome, KernelSlicesInsideAFunctionAddUpToItsKernelNumbers) {
  std::string trace = file("k.data"), json = file("k.json");
  Result r = record(trace, "sleeper,syscall_caller,getppid_1000,toucher,spinner",
                    {Paths::target_kernel, tag_arg()}, {"--kernel=+syscalls"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  ASSERT_TRUE(convert(trace, "chrome", json));
  ChromeTrace chrome(json);
  EXPECT_EQ(chrome.crossings, 0);
  auto rep = report_json(trace);
  ASSERT_TRUE(rep);
  expect_matches_report(chrome, *rep);
  for (const char* fn : {"sleeper", "getppid_1000", "syscall_caller", "spinner"}) {
    SCOPED_TRACE(fn);
    long long syscalls = 0, syscall_ns = 0, offcpu_ns = 0, getppid = 0;
    for (size_t i = 0; i < chrome.intervals.size(); ++i) {
      const Interval& iv = chrome.intervals[i];
      if (iv.cat == "function") continue;
      // Inside the outermost activation of fn (none of these recurse).
      bool inside = false;
      for (int p = iv.parent; p >= 0; p = chrome.intervals[p].parent)
        if (chrome.intervals[p].cat == "function" && chrome.intervals[p].name == fn) inside = true;
      if (!inside) continue;
      if (iv.cat == "syscall") {
        ++syscalls;
        syscall_ns += iv.end - iv.start;
        if (iv.name == "syscall:getppid") ++getppid;
      } else if (iv.cat == "sched") {
        offcpu_ns += iv.end - iv.start;
      }
    }
    const auto* f = find_function(*rep, fn);
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(syscalls, (*f)["syscalls"].get<long long>());
    EXPECT_EQ(syscall_ns, (*f)["syscall_ns"].get<long long>());
    EXPECT_EQ(offcpu_ns, (*f)["offcpu_ns"].get<long long>());
    if (std::string(fn) == "getppid_1000" || std::string(fn) == "syscall_caller") {
      EXPECT_EQ(getppid, 1000);
    }
    if (std::string(fn) == "sleeper") {
      EXPECT_GE(offcpu_ns, 45'000'000) << "nanosleep(50 ms) blocks off-CPU";
    }
  }
}

}  // namespace
}  // namespace atrace::it
