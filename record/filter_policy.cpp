#include "record/filter_policy.h"

#include <cstdio>

#include <algorithm>
#include <charconv>
#include <cmath>

namespace atrace {

std::optional<FilterMode> parse_filter_mode(std::string_view s) {
  if (s == "off") return FilterMode::Off;
  if (s == "absolute") return FilterMode::Absolute;
  if (s == "relative") return FilterMode::Relative;
  return std::nullopt;
}

FilterCosts filter_costs(const formats::ProbeCosts& calibrated) {
  using formats::ProbePath;
  FilterCosts out;
  for (ProbePath p : {ProbePath::Unknown, ProbePath::SingleStep, ProbePath::Emulated,
                      ProbePath::Nop5, ProbePath::Refused}) {
    out.cost_ns.push_back(calibrated.cost_or_typical(p));
    out.floor_ns.push_back(calibrated.floor_of(p));
  }
  return out;
}

RelevanceFilter::RelevanceFilter(FilterOptions o, std::vector<uint64_t> floor_ns)
    : o_(std::move(o)), floor_(std::move(floor_ns)) {}

void RelevanceFilter::mark(uint32_t id, std::vector<bool>& v) {
  if (id >= v.size()) v.resize(id + 1, false);
  v[id] = true;
}

void RelevanceFilter::keep(uint32_t id) { mark(id, keep_); }

bool RelevanceFilter::decided(uint32_t id) const { return is(id, done_); }

namespace {

std::string us_text(uint64_t ns) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f us", static_cast<double>(ns) / 1e3);
  return b;
}

}  // namespace

uint64_t absolute_limit_ns(uint64_t threshold_ns, uint64_t floor_ns) {
  return threshold_ns + floor_ns + floor_ns / 4;
}

uint64_t early_limit_ns(uint64_t threshold_ns, uint64_t floor_ns) {
  return absolute_limit_ns(threshold_ns / 4, floor_ns);
}

uint64_t RelevanceFilter::floor(const FunctionSample& s) const {
  auto p = static_cast<size_t>(s.path);
  return p < floor_.size() ? floor_[p] : 0;
}

uint64_t RelevanceFilter::limit(const FunctionSample& s) const {
  return absolute_limit_ns(o_.threshold_ns, floor(s));
}

bool RelevanceFilter::early_short(const FunctionSample& s) const {
  const uint64_t early = std::min(o_.early_calls, o_.min_calls);
  return s.calls >= early && s.sum_ns < early_limit_ns(o_.threshold_ns, floor(s)) * s.calls;
}

// The mean net of what the probes themselves add to a measured call.
uint64_t RelevanceFilter::net_mean(const FunctionSample& s) const {
  uint64_t mean = s.calls ? s.sum_ns / s.calls : 0;
  const uint64_t f = floor(s);
  return mean > f ? mean - f : 0;
}

std::vector<FilterDecision> RelevanceFilter::decide(const std::vector<FunctionSample>& now,
                                                    uint64_t cpu_ns,
                                                    const std::vector<uint64_t>& cost_ns) {
  std::vector<FilterDecision> out;
  auto take = [&](const FunctionSample& s, DetachReason r, std::string rule) {
    out.push_back({s.id, r, s.calls, s.sum_ns, net_mean(s), std::move(rule)});
    mark(s.id, done_);
  };
  // The absolute rules' comparison: net mean against the threshold (or a
  // quarter of it, early) plus the margin for the probes' variance.
  auto absolute_rule = [&](const FunctionSample& s, bool early) {
    const uint64_t bar = early ? o_.threshold_ns / 4 : o_.threshold_ns;
    return "net mean " + us_text(net_mean(s)) + " < " + us_text(bar) +
           (early ? " (a quarter of the threshold: early rule)" : " threshold") + " + " +
           us_text(floor(s) / 4) + " margin for the probes' variance";
  };
  auto open = [&](const FunctionSample& s) { return !is(s.id, done_) && !is(s.id, keep_); };

  // Turned off by the programs already (max-calls count reached, or the
  // absolute threshold crossed on a CPU): the decision is made.
  for (const auto& s : now) {
    if (is(s.id, done_) || !s.off) continue;
    std::string rule = *s.off == DetachReason::MaxCalls
                           ? std::to_string(s.calls) +
                                 " calls >= --filter-max-calls=" + std::to_string(o_.max_calls)
                           : absolute_rule(s, s.calls < o_.min_calls);
    take(s, *s.off, std::move(rule));
  }

  if (o_.mode == FilterMode::Absolute) {
    for (const auto& s : now) {
      if (!open(s)) continue;
      if (s.calls >= o_.min_calls && s.sum_ns < limit(s) * s.calls)
        take(s, DetachReason::Absolute, absolute_rule(s, false));
      else if (early_short(s)) take(s, DetachReason::Absolute, absolute_rule(s, true));
    }
  } else if (o_.mode == FilterMode::Relative) {
    // The mean of the means of the functions actually called (each counts
    // once, however often it ran), over all of them, decided or not.
    double sum = 0;
    size_t n = 0;
    for (const auto& s : now)
      if (s.calls > 0) {
        sum += static_cast<double>(net_mean(s));
        n++;
      }
    if (n > 1) {
      double bar = sum / static_cast<double>(n) - static_cast<double>(o_.threshold_ns);
      for (const auto& s : now)
        if (open(s) && s.calls >= o_.min_calls && static_cast<double>(net_mean(s)) < bar)
          take(s, DetachReason::Relative,
               "net mean " + us_text(net_mean(s)) + " < " +
                   us_text(static_cast<uint64_t>(std::max(bar, 0.0))) +
                   " (the mean of the functions' means less the threshold)");
    }
  }

  // Budget: estimated probe time since the last call = new hits x cost per
  // hit of the function's path; detach the most expensive until it is
  // under budget_pct of the traced threads' own CPU time.
  if (o_.budget_pct > 0 && cpu_ns > 0) {
    struct Cost {
      const FunctionSample* s;
      double ns;
      uint64_t per_call;
    };
    std::vector<Cost> costs;
    double total = 0;
    for (const auto& s : now) {
      uint64_t hits = s.calls;
      uint64_t before = s.id < last_hits_.size() ? last_hits_[s.id] : 0;
      if (s.id >= last_hits_.size()) last_hits_.resize(s.id + 1, 0);
      last_hits_[s.id] = hits;
      if (hits <= before || is(s.id, done_)) continue;
      auto p = static_cast<size_t>(s.path);
      double c = static_cast<double>(hits - before) *
                 static_cast<double>(p < cost_ns.size() ? cost_ns[p] : 0);
      total += c;
      // Only a function judged on enough calls goes (the early rule's
      // count: its probes cost already); the young ones' cost counts all
      // the same. Nor does one whose probes cost less per call than the
      // budget allows of its own time: taking a 1 ms function because a
      // kept hot one is over budget would lose its calls and save nothing.
      const double per_call = p < cost_ns.size() ? static_cast<double>(cost_ns[p]) : 0;
      const bool over_its_share =
          per_call > o_.budget_pct / 100.0 * static_cast<double>(net_mean(s));
      if (!is(s.id, keep_) && s.calls >= std::min(o_.early_calls, o_.min_calls) && over_its_share)
        costs.push_back({&s, c, static_cast<uint64_t>(per_call)});
    }
    std::sort(costs.begin(), costs.end(), [](const Cost& a, const Cost& b) { return a.ns > b.ns; });
    // The budget is a share of what the program itself used: the traced
    // threads' CPU time counts the probes too (they run in those threads),
    // and a share of that would allow any overhead at 100 %.
    const double own = std::max(static_cast<double>(cpu_ns) - total, 0.0);
    const double allowed = o_.budget_pct / 100.0 * own;
    for (const auto& c : costs) {
      if (total <= allowed || c.ns <= 0) break;
      take(*c.s, DetachReason::Budget,
           "its probes cost " + us_text(c.per_call) + " a call, over " +
               std::to_string(static_cast<int>(o_.budget_pct)) + " % of its net mean " +
               us_text(net_mean(*c.s)) + ", with the probes over --filter-budget");
      total -= c.ns;
    }
  }
  return out;
}

}  // namespace atrace
