// Relevance filters: which functions to stop tracing while the program
// runs, decided from the statistics the BPF programs keep (bpf/atrace.h,
// fn_stat). Pure logic, no BPF: the recorder feeds it snapshots on its
// timer and acts on the decisions (record/detacher.h).
//
//   FilterOptions    the command line's --filter* settings
//   FunctionSample   one function's numbers at one moment
//   RelevanceFilter  the rules: absolute, relative, max-calls, budget
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/trace_types.h"

namespace atrace {

enum class FilterMode { Off, Absolute, Relative };

// Defaults (stated in `atrace record --help`): absolute, 2 us, after 1000
// calls. Conservative: a function must be both frequent and, net of the
// probe's own cost, shorter than the cost of tracing it, before it goes.
// And a budget: whatever the durations, the probes may not take more CPU
// than the program itself (tracing at most doubles it): past that, the
// functions judged (past min_calls) whose probes cost most go first.
struct FilterOptions {
  FilterMode mode = FilterMode::Absolute;
  uint64_t threshold_ns = 2000;
  uint64_t min_calls = 1000;
  // The early rule (early_limit_ns): a function can go after this many
  // calls when the evidence is already clear. --filter-min-calls sets it
  // to its own value: the user's word that nothing is judged before.
  uint64_t early_calls = 100;
  uint64_t max_calls = 0;   // 0: no limit
  double budget_pct = 100;  // 0: no budget controller
  std::string keep;         // selectors never filtered
  bool active() const { return mode != FilterMode::Off || max_calls > 0 || budget_pct > 0; }
};

// "off", "absolute", "relative"
std::optional<FilterMode> parse_filter_mode(std::string_view s);

// The file's DETACH reasons (formats/trace_types.h).
using formats::DetachReason;

struct FunctionSample {
  uint32_t id = 0;
  uint64_t calls = 0;    // returned calls with a measured duration
  uint64_t sum_ns = 0;   // their summed durations, probe cost included
  uint64_t entries = 0;  // entries counted (max-calls rule), 0 if not counted
  // The programs already stopped recording it, and why: MaxCalls or
  // Absolute (threshold crossed on one CPU); nullopt while it is on.
  std::optional<DetachReason> off;
  formats::ProbePath path = formats::ProbePath::Unknown;
};

struct FilterDecision {
  uint32_t id = 0;
  DetachReason reason = DetachReason::Absolute;
  uint64_t calls = 0;
  uint64_t sum_ns = 0;
  // The mean the rules judge: sum_ns / calls net of what the probes add to
  // a measured call (floor_ns of its path).
  uint64_t net_mean_ns = 0;
  // The comparison that decided, with its numbers, as `record` says it:
  // "net mean 1.20 us < 2.00 us threshold + 0.41 us margin (...)".
  std::string rule;
};

// The absolute rule, in one place for the BPF programs (fn_state.limit_ns)
// and the policy: a function is short when its mean measured duration is
// under the threshold plus what the probes add inside the interval on its
// path (`floor_ns`, calibrated) plus a quarter of that. The quarter is the
// probes' own variance: their inside cost differs from the calibration's by
// up to ~20 % with the instruction stepped and the moment (single-stepped
// sqlite3 functions that take nanoseconds read 16-21 us against a 17 us
// calibration), and a function that short is shorter than the cost of
// tracing it anyway.
uint64_t absolute_limit_ns(uint64_t threshold_ns, uint64_t floor_ns);

// Deciding as soon as the evidence is enough, before min_calls, once a
// function has early_calls (100) returned calls:
//  - far below the bar: its mean, net of the probes, is under a quarter of
//    the threshold (the bar is early_limit_ns: the absolute rule's with a
//    quarter of the threshold). Its next calls would have to take more than
//    four times as long as its first 100, on average, for it to belong;
//  - too costly: the budget rule (budget_pct) is over budget and its probes
//    cost most: it takes functions from early_calls calls on, not min_calls.
// The programs apply the first on each CPU's numbers at once (as the
// absolute rule), the policy on all CPUs' at its tick.
uint64_t early_limit_ns(uint64_t threshold_ns, uint64_t floor_ns);

// What the filters count per traced call, by entry path (index =
// ProbePath), from the calibrated costs: `cost_ns` (budget rule) and
// `floor_ns` (taken off each mean), by formats::ProbeCosts'
// cost_or_typical and floor_of.
struct FilterCosts {
  std::vector<uint64_t> cost_ns, floor_ns;
};
FilterCosts filter_costs(const formats::ProbeCosts& calibrated);

class RelevanceFilter {
 public:
  // floor_ns: the duration a probed empty function measures on each entry
  // path (calibrated; index = ProbePath), taken off means before comparing.
  RelevanceFilter(FilterOptions o, std::vector<uint64_t> floor_ns = {});
  void keep(uint32_t id);  // never filtered
  // Decisions for the functions not yet decided. `cpu_ns`: CPU time the
  // traced threads used since the previous call (budget rule); `cost_ns`:
  // cost of one probe hit per entry path (index = ProbePath).
  std::vector<FilterDecision> decide(const std::vector<FunctionSample>& now, uint64_t cpu_ns = 0,
                                     const std::vector<uint64_t>& cost_ns = {});
  bool decided(uint32_t id) const;

 private:
  uint64_t floor(const FunctionSample& s) const;    // inside cost on its path
  uint64_t limit(const FunctionSample& s) const;    // absolute rule's bar for the mean
  bool early_short(const FunctionSample& s) const;  // the early rule's first half
  uint64_t net_mean(const FunctionSample& s) const;
  FilterOptions o_;
  std::vector<uint64_t> floor_;
  std::vector<bool> keep_, done_;
  std::vector<uint64_t> last_hits_;  // id -> entries at the previous call (budget)
  void mark(uint32_t id, std::vector<bool>& v);
  bool is(uint32_t id, const std::vector<bool>& v) const { return id < v.size() && v[id]; }
};

}  // namespace atrace
