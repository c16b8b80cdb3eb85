// Relevance filters (issue 5) on the real kernel: target_filter's hot()
// (a few ns of work, hundreds of thousands of calls) is what a filter must
// detach while the program runs; slow() (about 1 ms, a few hundred calls,
// each calling hot() 1000 times) is what it must keep, exactly. The target
// prints its own counts and a checksum of its work, so "the program's output
// is unchanged" is a plain comparison with an untraced run.
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "tests/integration/fixture.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

// The absolute rule with a 10 us threshold instead of the default 2 us: the
// mean the filter measures for hot() includes the probes' own cost, about
// 1 to 2.5 us per call on the loaded 2-CPU VM these tests run on, so with
// 2 us hot() sometimes stays above the threshold and is never detached
// (1 run in 8 there). slow() takes over 1 ms: far above either.
const std::vector<std::string> kAbsolute = {"--filter=absolute", "--filter-threshold=10us"};

class Filters : public IntegrationTest {
 protected:
  void SetUp() override {
    IntegrationTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    for (const char* bin : {Paths::target_filter, Paths::target_filter_nop5})
      ASSERT_TRUE(std::filesystem::exists(bin)) << bin << " was not built";
  }

  // The target run without atrace: its stdout is what every traced run
  // must print too.
  Result untraced(const std::string& bin, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {bin};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.push_back(tag_arg());
    Result r = run(argv);
    EXPECT_TRUE(r.exited(0)) << r.describe();
    return r;
  }

  // atrace record --no-kernel --select=SELECT EXTRA... -- BIN ARGS...
  // (kernel events would only add events and time here), then the JSON
  // report. The run is kept in run_, the trace's path in trace_.
  std::optional<nlohmann::json> record_target(const std::string& bin,
                                              const std::vector<std::string>& args,
                                              const std::vector<std::string>& extra,
                                              const std::string& select = "hot,slow",
                                              const std::string& name = "f.data",
                                              bool no_kernel = true) {
    trace_ = file(name);
    std::vector<std::string> cmd = {bin};
    cmd.insert(cmd.end(), args.begin(), args.end());
    cmd.push_back(tag_arg());
    std::vector<std::string> opts;
    if (no_kernel) opts.push_back("--no-kernel");
    opts.insert(opts.end(), extra.begin(), extra.end());
    run_ = record(trace_, select, cmd, opts);
    if (!run_.exited(0)) {
      ADD_FAILURE() << run_.describe();
      return std::nullopt;
    }
    auto rep = report_json(trace_);
    if (rep) {
      EXPECT_EQ((*rep)["lost_events"], 0) << "lost events make every count below uncertain";
    }
    return rep;
  }

  // The entry of `detached` naming `fn`, nullptr when there is none.
  static const nlohmann::json* detached_entry(const nlohmann::json& rep, const std::string& fn) {
    if (!rep.contains("detached") || !rep["detached"].is_array()) return nullptr;
    for (const auto& d : rep["detached"])
      if (d.contains("name") && d["name"].is_string() &&
          base_name(d["name"].get<std::string>()) == fn)
        return &d;
    return nullptr;
  }

  // The function object's "detached" flag (false when missing).
  static bool marked_detached(const nlohmann::json& rep, const std::string& fn) {
    const auto* f = find_function(rep, fn);
    return f != nullptr && f->contains("detached") && (*f)["detached"].is_boolean() &&
           (*f)["detached"].get<bool>();
  }

  // Checks the `detached` entry of `fn` against the rule that must have
  // fired, and the function's "detached" mark; returns the entry.
  const nlohmann::json* expect_detached(const nlohmann::json& rep, const std::string& fn,
                                        const std::string& rule) {
    const auto* d = detached_entry(rep, fn);
    EXPECT_NE(d, nullptr) << fn << " is not in detached: " << rep["detached"].dump();
    if (d == nullptr) return nullptr;
    EXPECT_EQ((*d)["rule"], rule) << d->dump();
    EXPECT_NE((*d)["module"].get<std::string>().find("target_filter"), std::string::npos)
        << d->dump();
    EXPECT_GT((*d)["time_ns"].get<long long>(), 0) << d->dump();
    long long calls = (*d)["calls"].get<long long>();
    EXPECT_GT(calls, 0) << d->dump();
    // mean = total / calls, up to rounding.
    long long total = (*d)["total_ns"].get<long long>();
    long long mean = (*d)["mean_ns"].get<long long>();
    EXPECT_GE(total, 0) << d->dump();
    if (calls > 0) {
      EXPECT_NEAR(static_cast<double>(mean), static_cast<double>(total) / calls, 1.0) << d->dump();
    }
    // The report's count is every entry recorded; the decision counted the
    // calls that had returned by then.
    EXPECT_GE(calls_of(rep, fn), calls) << d->dump();
    EXPECT_TRUE(marked_detached(rep, fn)) << fn << " not marked detached";
    return d;
  }

  // A kept function: exact count, nothing unfinished, not detached.
  void expect_exact(const nlohmann::json& rep, const std::string& fn, const std::string& key,
                    long long expected) {
    EXPECT_EQ(calls_of(rep, fn), expected) << fn << " in " << function_names(rep);
    EXPECT_EQ(function_field(rep, fn, "unfinished"), 0) << fn;
    EXPECT_EQ(detached_entry(rep, fn), nullptr) << fn << " detached: " << rep["detached"].dump();
    EXPECT_FALSE(marked_detached(rep, fn)) << fn;
    EXPECT_EQ(printed_count(run_.out, key).value_or(-1), expected)
        << "the target itself disagrees: a broken target\n"
        << run_.describe();
  }

  // Lines of `atrace script` whose kind is "detach:".
  std::vector<std::string> script_detach_lines() {
    Result s = run({Paths::atrace, "script", "-i", trace_, "--fields=time,kind,details"});
    EXPECT_TRUE(s.exited(0)) << s.describe();
    std::vector<std::string> lines;
    std::istringstream in(s.out);
    for (std::string line; std::getline(in, line);)
      if (line.find(" detach:") != std::string::npos) lines.push_back(line);
    return lines;
  }

  // The absolute filter with default settings on SLOW x 1000 calls of
  // hot() per thread: hot detached early, slow exact, output unchanged.
  void absolute_detaches_hot(const std::string& bin, int threads) {
    const long long slow_calls = 300LL * threads, hot_calls = 300LL * 1000 * threads;
    std::vector<std::string> args = {"300", "1000", "--threads=" + std::to_string(threads)};
    Result plain = untraced(bin, args);
    auto rep = record_target(bin, args, kAbsolute);
    ASSERT_TRUE(rep);
    EXPECT_EQ(run_.out, plain.out) << "tracing changed the target's output";
    ASSERT_EQ(printed_count(run_.out, "hot").value_or(-1), hot_calls) << run_.describe();

    // Detached early: at least the 100 calls of the early rule were
    // recorded, and few more (the recorder acts within milliseconds; 10 %
    // of the calls is 30 000 calls per thread, 60 to 100 ms of this run).
    long long hot = calls_of(*rep, "hot");
    EXPECT_GE(hot, 100) << "detached before the early rule's count";
    EXPECT_LT(hot, hot_calls / 10)
        << "hot detached late: " << hot << " of " << hot_calls << " calls recorded";
    const auto* d = expect_detached(*rep, "hot", "absolute");
    if (d != nullptr) {
      EXPECT_GE((*d)["calls"].get<long long>(), 100) << d->dump();
      // No bound on the mean itself: the programs decide per CPU, on a
      // clock that leaves out preemption, and the event reports the
      // function's numbers over every CPU; on a loaded machine these read
      // above the threshold (10.4 us net seen under a parallel build).
      EXPECT_LE((*d)["net_mean_ns"].get<long long>(), (*d)["mean_ns"].get<long long>())
          << d->dump();
    }
    expect_exact(*rep, "slow", "slow", slow_calls);
    EXPECT_EQ((*rep)["detached"].size(), 1u) << (*rep)["detached"].dump();

    // One stderr line per detach, naming the function.
    EXPECT_NE(run_.err.find("hot"), std::string::npos) << run_.err;
    // atrace script shows the decision.
    auto lines = script_detach_lines();
    ASSERT_EQ(lines.size(), 1u) << "detach lines in atrace script";
    EXPECT_NE(lines[0].find("hot"), std::string::npos) << lines[0];
    EXPECT_NE(lines[0].find("rule=absolute"), std::string::npos) << lines[0];
  }

  Result run_;
  std::string trace_;
};

TEST_F(Filters, AbsoluteDetachesHotEarlyAndKeepsSlowExact) {
  absolute_detaches_hot(Paths::target_filter, 1);
}

TEST_F(Filters, AbsoluteWithNop5Entries) { absolute_detaches_hot(Paths::target_filter_nop5, 1); }

// A program built with -pg -mfentry -mnop-mcount: every probe on the fast
// NOP5 path, said by atrace info, and every call counted.
TEST_F(Filters, Nop5EntriesAreMarkedFastAndCountedExactly) {
  auto rep = record_target(Paths::target_filter_nop5, {"30", "100"}, {"--filter=off"});
  ASSERT_TRUE(rep);
  expect_exact(*rep, "hot", "hot", 30 * 100);
  expect_exact(*rep, "slow", "slow", 30);
  Result info = run({Paths::atrace, "info", "-i", trace_});
  ASSERT_TRUE(info.exited(0)) << info.describe();
  EXPECT_NE(info.out.find("Probes: 2 (2 on the fast nop5 path)"), std::string::npos) << info.out;
  Result list = run({Paths::atrace, "list", Paths::target_filter_nop5, "hot,slow"});
  ASSERT_TRUE(list.exited(0)) << list.describe();
  EXPECT_NE(list.out.find("2 nop5"), std::string::npos) << list.out;
}

// The defaults alone (absolute, 2 us, 1000 calls): the mean is judged net
// of the probe cost's share (calibrated at start-up), so a tiny function is
// detached even when the probes alone cost more than 2 us a call.
TEST_F(Filters, DefaultSettingsDetachHot) {
  std::vector<std::string> args = {"300", "1000"};
  auto rep = record_target(Paths::target_filter, args, {}, "hot,slow", "f.data", false);
  ASSERT_TRUE(rep);
  EXPECT_LT(calls_of(*rep, "hot"), 300LL * 1000 / 10) << "hot detached late or not at all";
  expect_detached(*rep, "hot", "absolute");
  expect_exact(*rep, "slow", "slow", 300);
}

// The same where hot()'s entry is single-stepped: each call then measures
// ~10 us, nearly all of it the probes' own cost, inside its interval. The
// calibrated inside cost (calibrate.h) is taken off before judging, and
// with the default kernel groups (sched) the time a call spends preempted
// too: hot() goes within about its first --filter-min-calls calls, even on
// a loaded machine.
TEST_F(Filters, DefaultSettingsDetachSingleSteppedHot) {
  Result list = run({Paths::atrace, "list", Paths::target_filter_singlestep, "hot"});
  ASSERT_TRUE(list.exited(0)) << list.describe();
  ASSERT_NE(list.out.find("single-step"), std::string::npos)
      << "hot() must be single-stepped for this test: " << list.out;
  auto rep = record_target(Paths::target_filter_singlestep, {"100", "1000"}, {}, "hot,slow",
                           "f.data", false);
  ASSERT_TRUE(rep);
  const long long hot = calls_of(*rep, "hot");
  EXPECT_GE(hot, 100) << "detached before the early rule's count";
  // Judged on one CPU's first 100 calls (the early rule) or 1000 when the machine is quiet (1000 to
  // 1100 here); under heavy load (a CI build on the same two CPUs) a few
  // windows can read above the threshold and the decision comes later.
  // Before the inside cost was calibrated it never came.
  // Failed once in a CI-style run (not detached at all, 100000 calls):
  // say what the calibration measured and what atrace said, for the next.
  EXPECT_LT(hot, 100000 / 2) << "hot detached late or not at all; calibrated inside cost: "
                             << (*rep)["probe_inside_ns"].dump() << "\n"
                             << run_.err;
  // Either default rule may remove it first: the absolute threshold (its
  // mean is below it), or the overhead budget (its single-stepped probes
  // cost more than the budget allows): which one depends on the day's trap
  // cost and on which window closes first (both seen at 5a49965, idle, 1
  // run in 5 by the budget).
  const auto* d = detached_entry(*rep, "hot");
  ASSERT_NE(d, nullptr) << "hot is not in detached: " << (*rep)["detached"].dump();
  expect_detached(*rep, "hot", (*d)["rule"] == "budget" ? "budget" : "absolute");
  expect_exact(*rep, "slow", "slow", 100);
  EXPECT_GT((*rep)["probe_inside_ns"]["single_step"].get<long long>(), 0) << rep->dump();
}

// Two threads calling hot() at once: the decision must not disturb either.
TEST_F(Filters, AbsoluteWithTwoThreads) {
  absolute_detaches_hot(Paths::target_filter, 2);
  if (HasFailure()) return;
  // slow's calls split exactly over the two worker threads.
  auto rep = report_json(trace_, {"--threads"});
  ASSERT_TRUE(rep);
  const auto* slow = find_function(*rep, "slow");
  ASSERT_NE(slow, nullptr);
  ASSERT_TRUE(slow->contains("per_thread")) << slow->dump();
  std::set<long long> tids;
  for (const auto& t : (*slow)["per_thread"]) {
    EXPECT_EQ(t["calls"], 300) << t.dump();
    tids.insert(t["tid"].get<long long>());
  }
  EXPECT_EQ(tids.size(), 2u) << (*slow)["per_thread"].dump();
}

TEST_F(Filters, RelativeDetachesHot) {
  std::vector<std::string> args = {"100", "1000"};
  Result plain = untraced(Paths::target_filter, args);
  // The relative rule alone: the default budget would otherwise take hot
  // in a look where slow has not returned yet and the relative rule, with
  // one function called, cannot judge.
  auto rep = record_target(Paths::target_filter, args, {"--filter=relative", "--filter-budget=0"});
  ASSERT_TRUE(rep);
  EXPECT_EQ(run_.out, plain.out) << "tracing changed the target's output";
  EXPECT_LT(calls_of(*rep, "hot"), 100000 / 2) << "hot detached late or not at all";
  expect_detached(*rep, "hot", "relative");
  expect_exact(*rep, "slow", "slow", 100);
}

// --filter-max-calls=N detaches at N calls whatever the duration. N = 500 is
// below --filter-min-calls (1000, given, so without the early rule), so the
// absolute rule cannot fire first.
// The entries recorded are N plus at most the calls that entered while the
// count was being crossed: one per thread calling hot() (hot calls nothing,
// so a thread has at most one call of it in flight).
class MaxCalls : public Filters {
 protected:
  void check(int threads) {
    constexpr long long kMax = 500;
    std::vector<std::string> args = {"100", "1000", "--threads=" + std::to_string(threads)};
    Result plain = untraced(Paths::target_filter, args);
    auto rep = record_target(Paths::target_filter, args,
                             {"--filter=absolute", "--filter-min-calls=1000",
                              "--filter-max-calls=" + std::to_string(kMax)});
    ASSERT_TRUE(rep);
    EXPECT_EQ(run_.out, plain.out) << "tracing changed the target's output";
    long long hot = calls_of(*rep, "hot");
    EXPECT_GE(hot, kMax) << "detached before its count";
    EXPECT_LE(hot, kMax + threads) << "more calls recorded than max-calls + calls in flight";
    const auto* d = expect_detached(*rep, "hot", "max-calls");
    if (d != nullptr) {
      EXPECT_GE((*d)["calls"].get<long long>(), kMax - threads) << d->dump();
      EXPECT_LE((*d)["calls"].get<long long>(), kMax + threads) << d->dump();
    }
    // slow is called 100 times per thread: under the maximum, kept.
    expect_exact(*rep, "slow", "slow", 100LL * threads);
  }
};

TEST_F(MaxCalls, DetachesAtItsCount) { check(1); }
TEST_F(MaxCalls, DetachesAtItsCountWithTwoThreads) { check(2); }

// A function of the keep list is never detached: every call recorded.
TEST_F(Filters, KeepListIsNeverDetached) {
  std::vector<std::string> args = {"100", "1000"};
  auto rep = record_target(Paths::target_filter, args, {"--filter=absolute", "--filter-keep=hot"});
  ASSERT_TRUE(rep);
  expect_exact(*rep, "hot", "hot", 100000);
  expect_exact(*rep, "slow", "slow", 100);
  EXPECT_TRUE((*rep)["detached"].empty()) << (*rep)["detached"].dump();
}

// --filter=off: nothing is detached, every hot call is recorded.
TEST_F(Filters, OffKeepsEveryCall) {
  std::vector<std::string> args = {"100", "1000"};
  Result plain = untraced(Paths::target_filter, args);
  auto rep = record_target(Paths::target_filter, args, {"--filter=off"});
  ASSERT_TRUE(rep);
  EXPECT_EQ(run_.out, plain.out);
  expect_exact(*rep, "hot", "hot", 100000);
  expect_exact(*rep, "slow", "slow", 100);
  EXPECT_TRUE((*rep)["detached"].empty()) << (*rep)["detached"].dump();
  EXPECT_TRUE(script_detach_lines().empty());
}

// OUTPUT.exclude lists the detached functions, one selector a line; a second
// run reading it with --exclude=@FILE never probes them.
TEST_F(Filters, ExcludeFileRoundTrips) {
  std::vector<std::string> args = {"300", "1000"};
  auto first = record_target(Paths::target_filter, args, kAbsolute, "hot,slow", "first.data");
  ASSERT_TRUE(first);
  expect_detached(*first, "hot", "absolute");
  std::string exclude = trace_ + ".exclude";
  ASSERT_TRUE(std::filesystem::exists(exclude)) << exclude << " not written\n" << run_.describe();
  std::ifstream in(exclude);
  std::vector<std::string> selectors;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') selectors.push_back(line);  // '#': comments
  ASSERT_EQ(selectors.size(), 1u) << "one detached function, one selector";
  // "hot", or the same qualified by its module ("target_filter:hot").
  const std::string& sel = selectors[0];
  EXPECT_TRUE(sel == "hot" || (sel.size() > 4 && sel.compare(sel.size() - 4, 4, ":hot") == 0))
      << sel;

  auto second =
      record_target(Paths::target_filter, args, {"--filter=absolute", "--exclude=@" + exclude},
                    "hot,slow", "second.data");
  ASSERT_TRUE(second);
  EXPECT_EQ(find_function(*second, "hot"), nullptr)
      << "hot was probed despite the exclude file: " << function_names(*second);
  expect_exact(*second, "slow", "slow", 300);
  EXPECT_TRUE((*second)["detached"].empty()) << (*second)["detached"].dump();
  Result info = run({Paths::atrace, "info", "-i", trace_});
  ASSERT_TRUE(info.exited(0)) << info.describe();
  // The "Probes:" table of atrace info: one row per probe, the function last.
  size_t probes = info.out.find("\nProbes:");
  ASSERT_NE(probes, std::string::npos) << info.out;
  std::istringstream table(info.out.substr(probes + 1, info.out.find("\n\n", probes + 1) - probes));
  for (std::string row; std::getline(table, row);) {
    EXPECT_FALSE(row.size() >= 4 && row.compare(row.size() - 4, 4, " hot") == 0)
        << "hot among the probes:\n"
        << info.out;
  }
}

// hot() is detached while deep() recurses 40 levels down (the recursion is
// nearly the whole run): deep's numbers stay exact and consistent, and the
// call tree in atrace script stays properly nested, the call of hot() in
// flight at the detach ending with its caller's exit at worst.
TEST_F(Filters, DetachInDeepRecursionKeepsTheCallTreeConsistent) {
  constexpr long long kReps = 2000, kDepth = 40;
  const long long deep_calls = kReps * (kDepth + 1);
  std::vector<std::string> args = {std::to_string(kReps), "--recurse=" + std::to_string(kDepth)};
  Result plain = untraced(Paths::target_filter, args);
  // deep() itself does nothing but recurse: judged net of its callees'
  // probes, it is as short as hot() and would go too; kept, so that only
  // hot() is detached, while the recursion is open.
  std::vector<std::string> filter = kAbsolute;
  filter.push_back("--filter-keep=deep");
  auto rep = record_target(Paths::target_filter, args, filter, "hot,deep");
  ASSERT_TRUE(rep);
  EXPECT_EQ(run_.out, plain.out) << "tracing changed the target's output";
  ASSERT_EQ(printed_count(run_.out, "deep").value_or(-1), deep_calls) << run_.describe();

  expect_detached(*rep, "hot", "absolute");
  EXPECT_LT(calls_of(*rep, "hot"), deep_calls / 2) << "hot detached late";
  expect_exact(*rep, "deep", "deep", deep_calls);
  EXPECT_EQ((*rep)["orphan_exits"], 0);

  const long long wall = (*rep)["duration_ns"].get<long long>();
  for (const char* fn : {"deep", "hot"}) {
    const auto* f = find_function(*rep, fn);
    ASSERT_NE(f, nullptr) << fn;
    long long total = (*f)["total_ns"], self = (*f)["self_ns"];
    long long mn = (*f)["min_ns"], mx = (*f)["max_ns"], avg = (*f)["avg_ns"];
    EXPECT_GE(self, 0) << f->dump();
    EXPECT_LE(self, total) << f->dump();
    EXPECT_GT(total, 0) << f->dump();
    EXPECT_LE(total, wall) << "more time than the recording lasted: " << f->dump();
    EXPECT_LE(mn, avg) << f->dump();
    EXPECT_LE(avg, mx) << f->dump();
    EXPECT_LE(mx, wall) << f->dump();
  }
  // deep's self time is its total minus what its traced callees took; hot is
  // its only traced callee besides itself (outermost activations only count
  // in total, every activation in self).
  EXPECT_LE(function_field(*rep, "hot", "total_ns"), function_field(*rep, "deep", "total_ns"));

  // The call tree, event by event: exits match the innermost open call; the
  // only call allowed to end without its own exit is a hot() open at the
  // detach. At the detach the thread is inside the recursion.
  Result s = run({Paths::atrace, "script", "-i", trace_, "--fields=tid,time,kind,details"});
  ASSERT_TRUE(s.exited(0)) << s.describe();
  std::istringstream in(s.out);
  std::map<long, std::vector<std::string>> stacks;
  long skipped_hot = 0, detaches = 0;
  size_t depth_at_detach = 0;
  for (std::string line; std::getline(in, line);) {
    std::istringstream l(line);
    long tid = 0;
    std::string time, kind, details;
    l >> tid >> time >> kind;
    ASSERT_FALSE(l.fail()) << line;
    std::getline(l, details);
    size_t start = details.find_first_not_of(' ');
    std::string fn = start == std::string::npos ? "" : details.substr(start);
    if (kind == "entry:") {
      stacks[tid].push_back(fn);
    } else if (kind == "exit:") {
      fn = fn.substr(0, fn.rfind(" ("));
      auto& st = stacks[tid];
      while (!st.empty() && st.back() != fn && st.back() == "hot") {
        st.pop_back();
        ++skipped_hot;
      }
      ASSERT_FALSE(st.empty()) << "exit without entry: " << line;
      ASSERT_EQ(st.back(), fn) << "exit of another call than the innermost: " << line;
      st.pop_back();
    } else if (kind == "detach:") {
      ++detaches;
      for (const auto& [t, st] : stacks) depth_at_detach = std::max(depth_at_detach, st.size());
    }
  }
  EXPECT_EQ(detaches, 1);
  EXPECT_LE(skipped_hot, 1) << "calls of hot() without an exit: at most the one in flight";
  EXPECT_GE(depth_at_detach, 1u) << "the detach did not happen inside the recursion";
  for (const auto& [t, st] : stacks) EXPECT_TRUE(st.empty()) << st.size() << " calls left open";
}

// Each detach rebuilds the link group of the functions left: new links, a
// generation switch, the old links closed. Here the 32 h functions reach
// --filter-max-calls one phase after another (32 switches, or fewer when
// the recorder takes several at once) while a second thread runs kept()
// without pause: a hit of kept whose programs run across a switch (the new
// link's before it, the old link's after) is recorded exactly once, so
// every activation counts once, none is left open and no exit lacks its
// entry. (kept recurses: a lost entry or exit would pair with another
// activation.)
TEST_F(Filters, GenerationSwitchesLoseNoCallOfAKeptFunction) {
  auto rep = record_target(Paths::target_generations, {"32", "200"},
                           {"--filter=absolute", "--filter-max-calls=100", "--filter-keep=kept"},
                           "kept,h0*,h1*,h2*,h3*");
  ASSERT_TRUE(rep);
  long long kept = printed_count(run_.out, "kept").value_or(-1);
  ASSERT_GT(kept, 0) << run_.describe();
  expect_exact(*rep, "kept", "kept", kept);
  EXPECT_EQ((*rep)["orphan_exits"], 0);
  size_t detached = 0;
  for (const auto& d : (*rep)["detached"])
    if (base_name(d["name"].get<std::string>())[0] == 'h') ++detached;
  EXPECT_EQ(detached, 32u) << (*rep)["detached"].dump();
  EXPECT_GE(script_detach_lines().size(), 2u) << "one rebuild only: no switch under load";
}

// Deciding as soon as the evidence is enough (filter_policy.h, the early
// rule): hot() takes nanoseconds, far below the threshold, and goes after
// its first 100 calls on a CPU rather than 1000; slow() stays, exact.
TEST_F(Filters, EarlyRuleDetachesAFarShortFunctionBefore1000Calls) {
  auto rep = record_target(Paths::target_filter, {"100", "1000"}, kAbsolute);
  ASSERT_TRUE(rep);
  const long long hot = calls_of(*rep, "hot");
  EXPECT_GE(hot, 100) << "detached before the early rule's count";
  EXPECT_LT(hot, 1000) << "not decided early";
  const auto* d = expect_detached(*rep, "hot", "absolute");
  if (d != nullptr) {
    EXPECT_GE((*d)["calls"].get<long long>(), 100) << d->dump();
    EXPECT_LT((*d)["calls"].get<long long>(), 1000) << d->dump();
  }
  expect_exact(*rep, "slow", "slow", 100);
}

// --filter-min-calls given is the user's word: nothing is judged before it,
// early rule included.
TEST_F(Filters, MinCallsGivenDisablesTheEarlyRule) {
  auto rep = record_target(Paths::target_filter, {"100", "1000"},
                           {"--filter=absolute", "--filter-threshold=10us",
                            "--filter-min-calls=2000", "--filter-budget=0"});
  ASSERT_TRUE(rep);
  EXPECT_GE(calls_of(*rep, "hot"), 2000) << "detached before --filter-min-calls";
  const auto* d = expect_detached(*rep, "hot", "absolute");
  if (d != nullptr) {
    EXPECT_GE((*d)["calls"].get<long long>(), 2000) << d->dump();
  }
  expect_exact(*rep, "slow", "slow", 100);
}

// Detach at scale: 2,000 functions of one module probed (and main, in
// flight all along), 20 of them detached one after another at exactly 100
// calls (--filter-max-calls; --filter-min-calls keeps the other rules
// out). Every detached function has its 100 calls, the rest none, main its
// one, and at the end the kernel holds one generation of links on the
// process: a pair per group of FunctionProbes::kGroupFunctions (64)
// functions, with every function not detached (the target counts them
// itself, with bpf(BPF_LINK_GET_NEXT_ID), while atrace runs). The summary
// says how long from decision to probes gone.
TEST_F(Filters, DetachAtScaleLeavesOneGenerationOfLinks) {
  constexpr long long kPhases = 20, kFunctions = 2000 + 1;  // f_0000..f_1999, main
  auto rep = record_target(Paths::target_detach_scale, {std::to_string(kPhases), "200"},
                           {"--filter=absolute", "--filter-min-calls=1000",
                            "--filter-max-calls=100", "--filter-budget=0"},
                           "f_*,main");
  ASSERT_TRUE(rep);
  ASSERT_EQ(printed_count(run_.out, "calls").value_or(-1), kPhases * 200) << run_.describe();
  EXPECT_NE(run_.err.find("probing 2001 functions"), std::string::npos) << run_.err;
  for (int i = 0; i < kPhases; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "f_%04d", i);
    EXPECT_EQ(calls_of(*rep, name), 100) << name;
    EXPECT_EQ(function_field(*rep, name, "unfinished"), 0) << name;
    const auto* d = detached_entry(*rep, name);
    ASSERT_NE(d, nullptr) << name << " not detached: " << (*rep)["detached"].dump();
    EXPECT_EQ((*d)["rule"], "max-calls") << d->dump();
  }
  EXPECT_EQ((*rep)["detached"].size(), static_cast<size_t>(kPhases));
  EXPECT_EQ(calls_of(*rep, "main"), 1);
  EXPECT_EQ(find_function(*rep, "f_0020"), nullptr) << "never called, yet in the report";
  EXPECT_EQ((*rep)["orphan_exits"], 0);
  // The link count where the kernel has uprobe_multi links (6.6+); with
  // perf-event links (6.1) the target counts none.
  if (run_.err.find("uprobe_multi links") != std::string::npos) {
    const long long groups = (kFunctions + 63) / 64;
    EXPECT_EQ(printed_count(run_.out, "links").value_or(-1), 2 * groups)
        << "more than one generation of links left\n"
        << run_.describe();
    EXPECT_EQ(printed_count(run_.out, "probes").value_or(-1), 2 * (kFunctions - kPhases))
        << run_.describe();
  }
  const auto at = run_.err.find("decision to probes gone: median ");
  EXPECT_NE(at, std::string::npos) << run_.err;
  if (at != std::string::npos)
    std::printf("%s; links at the end: %lld\n",
                run_.err.substr(at, run_.err.find('\n', at) - at).c_str(),
                static_cast<long long>(printed_count(run_.out, "links").value_or(-1)));
}

}  // namespace
}  // namespace atrace::it
