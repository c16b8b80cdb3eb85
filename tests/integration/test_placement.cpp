// Entry-probe placement (issue 15, uprobes/placement.h): probes move past a
// function's first instruction onto a cheaper one only where every call
// still meets them once with the return address at [rsp]. target_placement
// has functions of every shape, with the place each must get; the counts
// must be exact, the durations well-formed and the program's output that of
// the untraced run, both with the probes moved and all at +0.
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "tests/integration/fixture.h"
#include "tests/integration/report.h"
#include "tests/integration/untraced_compare.h"

namespace atrace::it {
namespace {

// Where `atrace list` must put each probe. pl_mov_nop5 is "+3 nop5" where
// the kernel has optimized uprobes, "+3 emulated" elsewhere.
const std::map<std::string, std::string> kPlaces = {
    {"pl_endbr_push", "+4 emulated"},           // endbr64; push
    {"pl_mov_push", "+3 emulated"},             // single-stepped first, emulated second
    {"pl_loop_to_probe", "+0 single-step"},     // the push is a loop's target
    {"pl_loop_into_prefix", "+0 single-step"},  // a loop comes back into the prefix
    {"pl_loop_to_start", "+4 emulated"},        // a jump back to +0 still passes the probe
    {"pl_shared_tail", "+0 single-step"},       // another function jumps into the prefix
    {"pl_side_door", "+4 emulated"},            // lea, then a tail jmp: the probe on the jmp
    {"pl_red_zone", "+0 single-step"},          // the first instruction touches %rsp
    {"pl_indirect", "+0 single-step"},          // an indirect jump
    // -fcf-protection -fno-omit-frame-pointer: endbr64; push %rbp (not in leaves)
    {"c_leaf", "+0 single-step"},  // a leaf: endbr64; lea; ret
    {"c_outer", "+4 emulated"},
    {"c_recurse", "+8 emulated"},  // endbr64; cmp; jle: the probe on the jle
};

const char* kSelect = "pl_*,c_*";

// Every function of target_placement (kPlaces and pl_mov_nop5).
std::map<std::string, std::string> all_functions() {
  auto all = kPlaces;
  all["pl_mov_nop5"] = "+3";
  return all;
}

// "PATH ADDRESS SIZE PROBES MODULE FUNCTION" lines of `atrace list`: the
// function's PATH ("+4 emulated": two words).
std::map<std::string, std::string> listed_places(const std::string& out) {
  std::map<std::string, std::string> places;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string delta, path, addr, size, probes, module, name;
    if (!(words >> delta >> path >> addr >> size >> probes >> module >> name)) continue;
    if (delta.empty() || delta[0] != '+') continue;
    places[name] = delta + " " + path;
  }
  return places;
}

class Placement : public IntegrationTest {
 protected:
  // Every function's count against what target_placement printed, nothing
  // unfinished, durations that nest.
  void expect_exact(const nlohmann::json& rep, const Result& target) {
    EXPECT_EQ(rep["lost_events"], 0);
    size_t checked = 0;
    for (const auto& fn : all_functions()) {
      const std::string& name = fn.first;
      SCOPED_TRACE(name);
      auto own = printed_count(target.out, name);
      ASSERT_TRUE(own) << target.describe();
      EXPECT_EQ(calls_of(rep, name), *own) << function_names(rep);
      EXPECT_EQ(function_field(rep, name, "unfinished"), 0);
      EXPECT_GT(function_field(rep, name, "min_ns"), 0);
      EXPECT_LE(function_field(rep, name, "self_ns"), function_field(rep, name, "total_ns"));
      checked++;
    }
    EXPECT_EQ(checked, 13u);
    // c_leaf runs only inside c_outer; pl_endbr_push never inside another.
    EXPECT_LE(function_field(rep, "c_leaf", "total_ns"),
              function_field(rep, "c_outer", "total_ns"));
    EXPECT_EQ(function_field(rep, "pl_endbr_push", "self_ns"),
              function_field(rep, "pl_endbr_push", "total_ns"));
  }
};

TEST_F(Placement, ListShowsWhereEachProbeGoes) {
  Result r = run({Paths::atrace, "list", Paths::target_placement, kSelect});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  auto places = listed_places(r.out);
  for (const auto& [fn, place] : kPlaces) EXPECT_EQ(places[fn], place) << fn << "\n" << r.out;
  const std::string nop5 = places["pl_mov_nop5"];
  EXPECT_TRUE(nop5 == "+3 nop5" || nop5 == "+3 emulated") << r.out;
  EXPECT_NE(r.out.find("probed past their first instruction"), std::string::npos) << r.out;

  // --probe-at-entry: every probe at +0, as other tracers put them.
  Result at0 = run({Paths::atrace, "list", "--probe-at-entry", Paths::target_placement, kSelect});
  ASSERT_TRUE(at0.exited(0)) << at0.describe();
  auto places0 = listed_places(at0.out);
  EXPECT_EQ(places0.size(), kPlaces.size() + 1) << at0.out;
  for (const auto& [fn, place] : places0) EXPECT_EQ(place.substr(0, 3), "+0 ") << fn;
}

TEST_F(Placement, CountsExactAndOutputUnchangedWithMovedProbes) {
  const std::string trace = file("moved.data");
  ComparedRun c =
      run_untraced_and_traced({Paths::target_placement, "50", tag_arg()}, trace,
                              {"--select=" + std::string(kSelect), "--filter-min-calls=1000"});
  ASSERT_TRUE(behaves_as_untraced(c));
  EXPECT_NE(c.atrace_lines.find("past the first instruction"), std::string::npos) << c.atrace_lines;
  auto rep = report_json(trace);
  ASSERT_TRUE(rep);
  expect_exact(*rep, c.traced);

  // The trace's probe table says where each probe sat.
  Result info = run({Paths::atrace, "info", "-i", trace});
  ASSERT_TRUE(info.exited(0)) << info.describe();
  for (const auto& [fn, place] : kPlaces) {
    auto at = info.out.find(" " + fn + "\n");
    ASSERT_NE(at, std::string::npos) << fn << "\n" << info.out;
    std::string line = info.out.substr(info.out.rfind('\n', at) + 1, at - info.out.rfind('\n', at));
    EXPECT_NE(line.find(place), std::string::npos) << line;
  }
}

TEST_F(Placement, SameCountsWithEveryProbeAtEntry) {
  const std::string trace = file("at0.data");
  ComparedRun c = run_untraced_and_traced(
      {Paths::target_placement, "50", tag_arg()}, trace,
      {"--select=" + std::string(kSelect), "--probe-at-entry", "--filter-min-calls=1000"});
  ASSERT_TRUE(behaves_as_untraced(c));
  EXPECT_EQ(c.atrace_lines.find("past the first instruction"), std::string::npos) << c.atrace_lines;
  auto rep = report_json(trace);
  ASSERT_TRUE(rep);
  expect_exact(*rep, c.traced);
}

// The same through perf-event links: one link per probe, at the moved offset.
TEST_F(Placement, CountsExactWithPerfLinks) {
  const std::string trace = file("perf.data");
  ComparedRun c = run_untraced_and_traced(
      {Paths::target_placement, "20", tag_arg()}, trace,
      {"--select=" + std::string(kSelect), "--attach=perf", "--filter-min-calls=1000"});
  ASSERT_TRUE(behaves_as_untraced(c));
  auto rep = report_json(trace);
  ASSERT_TRUE(rep);
  expect_exact(*rep, c.traced);
}

// The relevance filter detaching functions whose probes moved: the links are
// rebuilt from the same (moved) sites, the program runs as untraced, and the
// functions not judged (fewer calls than --filter-min-calls) stay exact.
TEST_F(Placement, FilterDetachesMovedProbes) {
  const std::string trace = file("filter.data");
  ComparedRun c = run_untraced_and_traced({Paths::target_placement, "50", tag_arg()}, trace,
                                          {"--select=" + std::string(kSelect), "--filter=absolute",
                                           "--filter-threshold=1s", "--filter-min-calls=100"});
  ASSERT_TRUE(behaves_as_untraced(c));
  auto rep = report_json(trace);
  ASSERT_TRUE(rep);
  std::set<std::string> detached;
  for (const auto& d : (*rep)["detached"]) detached.insert(base_name(d["name"].get<std::string>()));
  // 500 calls or more, moved: judged and detached.
  for (const char* fn : {"pl_endbr_push", "pl_mov_push", "pl_mov_nop5"}) {
    EXPECT_TRUE(detached.count(fn)) << fn << ": " << (*rep)["detached"].dump();
    EXPECT_GE(calls_of(*rep, fn), 100) << fn;
  }
  // 50 calls each: never judged, every call recorded.
  for (const char* fn : {"pl_loop_to_probe", "pl_loop_into_prefix", "pl_shared_tail",
                         "pl_side_door", "pl_red_zone", "pl_indirect"}) {
    EXPECT_FALSE(detached.count(fn)) << fn;
    EXPECT_EQ(calls_of(*rep, fn), 50) << fn;
    EXPECT_EQ(function_field(*rep, fn, "unfinished"), 0) << fn;
  }
}

// C++ exceptions and forced unwinds through functions whose probes sit past
// endbr64: the unwind guard restores the return addresses the moved return
// probes replaced (their slots are where they would be at +0), and the
// program runs as untraced with every call and unwound frame counted.
TEST_F(Placement, ExceptionsThroughMovedProbes) {
  Result list = run({Paths::atrace, "list", Paths::target_exceptions_cet, "thrower,mid,driver"});
  ASSERT_TRUE(list.exited(0)) << list.describe();
  auto placed = listed_places(list.out);
  for (const char* fn : {"thrower(int)", "mid(int)", "driver(int)"})
    EXPECT_EQ(placed[fn].substr(0, 3), "+4 ") << fn << " is not probed past endbr64:\n" << list.out;

  const std::vector<std::vector<std::string>> runs = {{"throw", "20"}, {"cancel"}, {"exit"}};
  for (const auto& args : runs) {
    SCOPED_TRACE(args.front());
    const std::string trace = file(args.front() + ".data");
    std::vector<std::string> cmd = {Paths::target_exceptions_cet};
    cmd.insert(cmd.end(), args.begin(), args.end());
    cmd.push_back(tag_arg());
    ComparedRun c = run_untraced_and_traced(cmd, trace, {"--select=*"});
    ASSERT_TRUE(behaves_as_untraced(c));
    auto rep = report_json(trace);
    ASSERT_TRUE(rep);
    // "NAME calls=C unwound=U" lines of the program against the report.
    std::istringstream in(c.untraced.out);
    size_t checked = 0;
    for (std::string line; std::getline(in, line);) {
      char name[64];
      long long calls = 0, unwound = 0;
      if (std::sscanf(line.c_str(), "%63s calls=%lld unwound=%lld", name, &calls, &unwound) != 3)
        continue;
      SCOPED_TRACE(line);
      EXPECT_EQ(calls_of(*rep, name), calls) << function_names(*rep);
      EXPECT_EQ(function_field(*rep, name, "unwound"), unwound);
      EXPECT_EQ(function_field(*rep, name, "unfinished"), 0);
      checked++;
    }
    EXPECT_GT(checked, 0u) << c.untraced.out;
  }
}

}  // namespace
}  // namespace atrace::it
