// The relevance filters' rules, on made-up statistics with exact outcomes.
#include <gtest/gtest.h>

#include "record/filter_policy.h"

namespace atrace {
namespace {

FunctionSample fn(uint32_t id, uint64_t calls, uint64_t mean_ns,
                  formats::ProbePath path = formats::ProbePath::Emulated) {
  FunctionSample s;
  s.id = id;
  s.calls = calls;
  s.sum_ns = calls * mean_ns;
  s.path = path;
  return s;
}

std::vector<uint32_t> ids(const std::vector<FilterDecision>& d) {
  std::vector<uint32_t> v;
  for (const auto& x : d) v.push_back(x.id);
  return v;
}

TEST(FilterPolicy, AbsoluteNeedsEnoughCallsAndAShortMean) {
  FilterOptions o;              // absolute, 2 us, 1000 calls
  o.early_calls = o.min_calls;  // --filter-min-calls given: no early rule
  RelevanceFilter f(o);
  auto d = f.decide({fn(1, 999, 100), fn(2, 1000, 1999), fn(3, 5000, 2000), fn(4, 1000, 300)});
  EXPECT_EQ(ids(d), (std::vector<uint32_t>{2, 4}));
  EXPECT_EQ(d[0].reason, DetachReason::Absolute);
  EXPECT_EQ(d[0].calls, 1000u);
  EXPECT_EQ(d[0].sum_ns, 1000u * 1999);
  // Decided once: the same numbers again decide nothing new.
  EXPECT_TRUE(f.decide({fn(2, 2000, 10), fn(4, 2000, 10)}).empty());
  EXPECT_TRUE(f.decided(2));
  EXPECT_FALSE(f.decided(3));
}

// The early rule: from 100 calls, a net mean under a quarter of the
// threshold (500 ns of 2 us) goes; one under the threshold but not far
// below waits for --filter-min-calls.
TEST(FilterPolicy, EarlyRuleTakesAMeanFarBelowTheThresholdAfter100Calls) {
  FilterOptions o;  // absolute, 2 us, 1000 calls, early at 100
  EXPECT_EQ(o.early_calls, 100u);
  RelevanceFilter f(o);
  auto d = f.decide({fn(1, 99, 10), fn(2, 100, 499), fn(3, 100, 501), fn(4, 500, 1999)});
  EXPECT_EQ(ids(d), (std::vector<uint32_t>{2}));
  EXPECT_EQ(d[0].reason, DetachReason::Absolute);
  d = f.decide({fn(1, 100, 10), fn(3, 1000, 501), fn(4, 1000, 1999)});
  EXPECT_EQ(ids(d), (std::vector<uint32_t>{1, 3, 4}));
  // Net of the path's floor, like the absolute rule: 9 us of probes inside.
  std::vector<uint64_t> floor(5, 0);
  floor[static_cast<size_t>(formats::ProbePath::SingleStep)] = 9000;
  RelevanceFilter g(o, floor);
  EXPECT_EQ(early_limit_ns(2000, 9000), 500u + 9000 + 2250);
  d = g.decide({fn(5, 100, 9000 + 2250 + 499, formats::ProbePath::SingleStep),
                fn(6, 100, 9000 + 2250 + 501, formats::ProbePath::SingleStep)});
  EXPECT_EQ(ids(d), (std::vector<uint32_t>{5}));
  // --filter-min-calls=N given sets early_calls to N: nothing before N.
  o.min_calls = o.early_calls = 2000;
  RelevanceFilter h(o);
  EXPECT_TRUE(h.decide({fn(1, 1999, 1)}).empty());
  EXPECT_EQ(ids(h.decide({fn(1, 2000, 1)})), (std::vector<uint32_t>{1}));
}

TEST(FilterPolicy, KeptFunctionsAreNeverDetached) {
  FilterOptions o;
  o.max_calls = 10;
  RelevanceFilter f(o);
  f.keep(1);
  EXPECT_TRUE(f.decide({fn(1, 100000, 5)}).empty());
}

TEST(FilterPolicy, ProbeFloorIsTakenOffTheMean) {
  FilterOptions o;
  std::vector<uint64_t> floor(5, 0);
  floor[static_cast<size_t>(formats::ProbePath::SingleStep)] = 9000;
  RelevanceFilter f(o, floor);
  // 10.5 us measured on the single-step path is 1.5 us of the function's own.
  auto d = f.decide({fn(1, 2000, 10500, formats::ProbePath::SingleStep),
                     fn(2, 2000, 10500, formats::ProbePath::Emulated)});
  EXPECT_EQ(ids(d), (std::vector<uint32_t>{1}));
  // The decision carries the mean it judged: net of the floor, and the
  // comparison with its numbers, margin included (issue 31).
  EXPECT_EQ(d[0].net_mean_ns, 1500u);
  EXPECT_EQ(d[0].rule,
            "net mean 1.50 us < 2.00 us threshold + 2.25 us margin for the probes' variance");
}

// The calibrated costs by path, typical ones where a path was not
// measured, and the floors: inside cost, or half the cost.
TEST(FilterPolicy, FilterCostsFromTheCalibration) {
  formats::ProbeCosts c;
  c.nop5 = 400;
  c.emulated = 900;
  c.inside_emulated = 300;
  const FilterCosts f = filter_costs(c);
  auto at = [](const std::vector<uint64_t>& v, formats::ProbePath p) {
    return v.at(static_cast<size_t>(p));
  };
  ASSERT_EQ(f.cost_ns.size(), 5u);
  ASSERT_EQ(f.floor_ns.size(), 5u);
  EXPECT_EQ(at(f.cost_ns, formats::ProbePath::Nop5), 400u);
  EXPECT_EQ(at(f.cost_ns, formats::ProbePath::Emulated), 900u);
  EXPECT_EQ(at(f.cost_ns, formats::ProbePath::SingleStep), 15000u);  // not measured: typical
  EXPECT_EQ(at(f.cost_ns, formats::ProbePath::Unknown), 900u);       // taken as emulated
  EXPECT_EQ(at(f.cost_ns, formats::ProbePath::Refused), 0u);
  EXPECT_EQ(at(f.floor_ns, formats::ProbePath::Emulated), 300u);
  EXPECT_EQ(at(f.floor_ns, formats::ProbePath::Unknown), 300u);
  EXPECT_EQ(at(f.floor_ns, formats::ProbePath::Nop5), 200u);  // no inside cost: half
  EXPECT_EQ(at(f.floor_ns, formats::ProbePath::SingleStep), 7500u);
  EXPECT_EQ(at(f.floor_ns, formats::ProbePath::Refused), 0u);
  // Nothing measured: this machine's typical numbers.
  const FilterCosts none = filter_costs({});
  EXPECT_EQ(at(none.cost_ns, formats::ProbePath::Nop5), 650u);
  EXPECT_EQ(at(none.cost_ns, formats::ProbePath::Emulated), 1000u);
  EXPECT_EQ(at(none.floor_ns, formats::ProbePath::Emulated), 500u);
}

TEST(FilterPolicy, AbsoluteRuleAllowsAQuarterOfTheFloorForTheProbesVariance) {
  FilterOptions o;  // 2 us
  EXPECT_EQ(absolute_limit_ns(2000, 9000), 2000u + 9000u + 2250u);
  EXPECT_EQ(absolute_limit_ns(2000, 0), 2000u);
  std::vector<uint64_t> floor(5, 0);
  floor[static_cast<size_t>(formats::ProbePath::SingleStep)] = 9000;
  RelevanceFilter f(o, floor);
  auto d = f.decide({fn(1, 2000, 13200, formats::ProbePath::SingleStep),
                     fn(2, 2000, 13300, formats::ProbePath::SingleStep)});
  EXPECT_EQ(ids(d), (std::vector<uint32_t>{1}));
}

TEST(FilterPolicy, MaxCallsFollowsTheProgramsOffFlag) {
  FilterOptions o;
  o.mode = FilterMode::Off;
  o.max_calls = 50;
  RelevanceFilter f(o);
  FunctionSample a = fn(1, 10, 100), b = fn(2, 10, 100);
  b.off = DetachReason::MaxCalls;
  b.entries = 50;
  auto d = f.decide({a, b});
  ASSERT_EQ(ids(d), (std::vector<uint32_t>{2}));
  EXPECT_EQ(d[0].reason, DetachReason::MaxCalls);
}

// A program turned it off on one CPU's numbers: decided, whatever the
// other CPUs say.
TEST(FilterPolicy, ThresholdCrossedInTheProgramsIsDecided) {
  FilterOptions o;
  RelevanceFilter f(o);
  FunctionSample s = fn(1, 1500, 2500);  // all CPUs: 2.5 us, above the threshold
  s.off = DetachReason::Absolute;
  auto d = f.decide({s});
  ASSERT_EQ(ids(d), (std::vector<uint32_t>{1}));
  EXPECT_EQ(d[0].reason, DetachReason::Absolute);
}

TEST(FilterPolicy, RelativeUsesTheMeanOfCalledFunctions) {
  FilterOptions o;
  o.mode = FilterMode::Relative;
  o.threshold_ns = 1000;
  o.min_calls = 1;
  RelevanceFilter f(o);
  // Means 100, 5000, 9000 (and one never called, which must not count):
  // their mean is 4700, minus 1000 = 3700: only the 100 ns one is below.
  auto d = f.decide({fn(1, 10, 100), fn(2, 10, 5000), fn(3, 10, 9000), fn(4, 0, 0)});
  EXPECT_EQ(ids(d), (std::vector<uint32_t>{1}));
  EXPECT_EQ(d[0].reason, DetachReason::Relative);
}

TEST(FilterPolicy, OffDecidesNothing) {
  FilterOptions o;
  o.mode = FilterMode::Off;
  o.budget_pct = 0;  // as `--filter=off` sets it when no budget is given
  EXPECT_FALSE(o.active());
  RelevanceFilter f(o);
  EXPECT_TRUE(f.decide({fn(1, 1000000, 1)}).empty());
}

TEST(FilterPolicy, BudgetDetachesTheCostliestUntilUnder) {
  FilterOptions o;
  o.mode = FilterMode::Off;
  o.budget_pct = 10;
  RelevanceFilter f(o);
  std::vector<uint64_t> cost(5, 0);
  cost[static_cast<size_t>(formats::ProbePath::Emulated)] = 1000;
  // 1 s of CPU; hits cost 1 us each: 300 ms, 50 ms and 20 ms of probes,
  // so the program's own time was 630 ms. Allowed 63 ms: the 300 ms one
  // goes (370 -> 70 ms), then the 50 ms one (-> 20 ms); the last stays.
  auto d = f.decide({fn(1, 300000, 50), fn(2, 50000, 50), fn(3, 20000, 50)}, 1'000'000'000, cost);
  EXPECT_EQ(ids(d), (std::vector<uint32_t>{1, 2}));
  EXPECT_EQ(d[0].reason, DetachReason::Budget);
}

TEST(FilterPolicy, BudgetIsAShareOfTheProgramsOwnTime) {
  FilterOptions o;
  o.mode = FilterMode::Off;
  o.budget_pct = 100;  // tracing may at most double the program's CPU time
  RelevanceFilter f(o);
  std::vector<uint64_t> cost(5, 0);
  cost[static_cast<size_t>(formats::ProbePath::Emulated)] = 1000;
  // 1 s of CPU, 700 ms of it probes: the program's own 300 ms allow 300 ms
  // of probes, so the 600 ms function goes. (As a share of the CPU time
  // probes included, 100 % would allow any overhead.)
  auto d = f.decide({fn(1, 600000, 50), fn(2, 100000, 50)}, 1'000'000'000, cost);
  EXPECT_EQ(ids(d), (std::vector<uint32_t>{1}));
  // Under budget: nothing goes.
  RelevanceFilter g(o);
  EXPECT_TRUE(g.decide({fn(1, 200000, 50), fn(2, 100000, 50)}, 1'000'000'000, cost).empty());
}

// The default budget (tracing at most doubles the program's CPU time)
// judges a function only past min_calls, like the other rules; the young
// functions' probes count in the overhead all the same.
TEST(FilterPolicy, BudgetTakesOnlyFunctionsPastMinCalls) {
  FilterOptions o;
  o.mode = FilterMode::Off;
  o.early_calls = o.min_calls;  // --filter-min-calls given
  EXPECT_EQ(o.budget_pct, 100);
  EXPECT_TRUE(o.active());
  RelevanceFilter f(o);
  std::vector<uint64_t> cost(5, 0);
  cost[static_cast<size_t>(formats::ProbePath::SingleStep)] = 10000;
  // 100 ms of CPU: 999 calls of function 1 (10 ms of probes) and 1000 of
  // function 2 (10 ms): the 80 ms left allow it all.
  EXPECT_TRUE(f.decide({fn(1, 999, 50, formats::ProbePath::SingleStep),
                        fn(2, 1000, 50, formats::ProbePath::SingleStep)},
                       100'000'000, cost)
                  .empty());
  // 60 ms of CPU, 60 ms of it function 1's probes (5999 calls, judged) and
  // 9 ms function 3's (900 calls, young): over budget; only 1 goes.
  RelevanceFilter g(o);
  auto d = g.decide({fn(1, 5999, 50, formats::ProbePath::SingleStep),
                     fn(3, 900, 50, formats::ProbePath::SingleStep)},
                    60'000'000, cost);
  EXPECT_EQ(ids(d), (std::vector<uint32_t>{1}));
  // Over budget with young functions only: nothing goes yet.
  RelevanceFilter h(o);
  EXPECT_TRUE(h.decide({fn(3, 900, 50, formats::ProbePath::SingleStep)}, 10'000'000, cost).empty());
}

// Without --filter-min-calls, the budget takes functions from the early
// rule's 100 calls on: their probes cost already.
TEST(FilterPolicy, BudgetTakesFunctionsFrom100CallsByDefault) {
  FilterOptions o;
  o.mode = FilterMode::Off;
  std::vector<uint64_t> cost(5, 0);
  cost[static_cast<size_t>(formats::ProbePath::SingleStep)] = 10000;
  RelevanceFilter f(o);
  // 10 ms of CPU, 9 ms of it function 3's probes (900 calls): over budget.
  auto d = f.decide({fn(3, 900, 50, formats::ProbePath::SingleStep),
                     fn(4, 99, 50, formats::ProbePath::SingleStep)},
                    10'000'000, cost);
  EXPECT_EQ(ids(d), (std::vector<uint32_t>{3}));
  EXPECT_EQ(d[0].reason, DetachReason::Budget);
}

// A function whose probes cost less per call than the budget's share of
// its own time is never the budget's: a kept hot function over budget
// must not take a slow one with it.
TEST(FilterPolicy, BudgetLeavesFunctionsWhoseProbesCostLittleOfTheirTime) {
  FilterOptions o;
  o.mode = FilterMode::Off;
  std::vector<uint64_t> cost(5, 0);
  cost[static_cast<size_t>(formats::ProbePath::Emulated)] = 1000;
  RelevanceFilter f(o);
  // 200 ms of CPU, 150 ms of it probes: over budget. Function 1 (150,000
  // calls of 50 ns) goes; function 2 (100 calls of 1 ms, 1 us of probes
  // each) stays.
  auto d = f.decide({fn(1, 150000, 50), fn(2, 100, 1000000)}, 200'000'000, cost);
  EXPECT_EQ(ids(d), (std::vector<uint32_t>{1}));  // the costly one alone
  // Function 2 alone over budget (100 more calls: 0.1 ms of probes in
  // 0.15 ms of CPU): still not taken, its probes are 0.1 % of its time.
  EXPECT_TRUE(f.decide({fn(2, 200, 1000000)}, 150'000, cost).empty());
}

// Durations are base/duration.h's (test_base_diagnostics.cpp).
TEST(FilterPolicy, ParsesModes) {
  EXPECT_EQ(parse_filter_mode("relative"), FilterMode::Relative);
  EXPECT_FALSE(parse_filter_mode("sometimes"));
}

}  // namespace
}  // namespace atrace
