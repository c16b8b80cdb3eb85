// ProfileBuilder with --compensate: each call loses the inside cost of its
// own probes and the whole probe cost (entry + return, by the callee's entry
// path) of every traced call nested in it, at any depth; self time follows
// (raw self minus its own inside cost and the direct callees' costs);
// nothing goes below 0, and what would is counted. Exact numbers on
// hand-made traces.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "analysis/profile.h"
#include "output/report.h"

using namespace atrace;
using formats::EventKind;
using formats::ProbePath;

namespace {

enum { OUTER = 1, INNER = 2, SLOW = 3, UNKNOWN = 4 };

std::vector<formats::ProbeInfo> probes() {
  std::vector<formats::ProbeInfo> out;
  const char* names[] = {"", "outer", "inner", "slow", "unknown"};
  const ProbePath paths[] = {ProbePath::Unknown, ProbePath::Emulated, ProbePath::Nop5,
                             ProbePath::SingleStep, ProbePath::Unknown};
  for (uint32_t id = 1; id <= 4; id++) {
    formats::ProbeInfo p;
    p.id = id;
    p.name = names[id];
    p.module = "demo";
    p.path_kind = paths[id];
    out.push_back(p);
  }
  return out;
}

const analysis::ProbeCosts kCosts{100, 200, 1000};  // nop5, emulated, single-step

struct Seq {
  uint32_t tid = 10;
  std::vector<formats::Event> events;
  Seq& on(uint32_t t) {
    tid = t;
    return *this;
  }
  Seq& E(uint64_t ts, uint32_t id) { return push(ts, id, EventKind::FuncEntry); }
  Seq& X(uint64_t ts, uint32_t id) { return push(ts, id, EventKind::FuncExit); }
  Seq& push(uint64_t ts, uint32_t id, EventKind k) {
    formats::Event e;
    e.ts = ts;
    e.pid = 10;
    e.tid = tid;
    e.id = id;
    e.kind = k;
    events.push_back(e);
    return *this;
  }
};

analysis::Profile build(const Seq& s, bool compensate, uint64_t end_ts = 0) {
  analysis::ProfileBuilder b(probes());
  if (compensate) b.compensate(kCosts);
  for (const auto& e : s.events) b.add(e);
  return b.finish(end_ts, {}, {});
}

const analysis::FunctionStats& fn(const analysis::Profile& p, const std::string& name) {
  for (const auto& f : p.functions)
    if (f.name == name) return f;
  static analysis::FunctionStats none;
  ADD_FAILURE() << "no row " << name;
  return none;
}

// outer (emulated) calls inner (nop5) twice, then slow (single-step), which
// calls inner once.
Seq nested() {
  Seq s;
  s.E(0, OUTER);
  s.E(1000, INNER).X(1500, INNER);
  s.E(2000, INNER).X(2300, INNER);
  s.E(3000, SLOW).E(3500, INNER).X(3600, INNER).X(5000, SLOW);
  s.X(10000, OUTER);
  return s;
}

}  // namespace

TEST(ProfileCompensate, NestedCallsLoseTheirProbeCost) {
  auto p = build(nested(), true);
  // inner: nothing nested, and no inside cost in kCosts.
  EXPECT_EQ(fn(p, "inner").calls, 3u);
  EXPECT_EQ(fn(p, "inner").total_ns, 900u);
  EXPECT_EQ(fn(p, "inner").self_ns, 900u);
  EXPECT_EQ(fn(p, "inner").min_ns, 100u);
  EXPECT_EQ(fn(p, "inner").max_ns, 500u);
  // slow: 2000 raw minus one nested inner (100).
  EXPECT_EQ(fn(p, "slow").total_ns, 1900u);
  EXPECT_EQ(fn(p, "slow").self_ns, 1800u);  // raw self 1900 minus inner's 100
  // outer: 10000 raw minus inner x3 (300) and slow (1000) = 8700.
  EXPECT_EQ(fn(p, "outer").total_ns, 8700u);
  EXPECT_EQ(fn(p, "outer").min_ns, 8700u);
  EXPECT_EQ(fn(p, "outer").max_ns, 8700u);
  // self: raw 7200 minus its direct callees' costs (100 + 100 + 1000).
  EXPECT_EQ(fn(p, "outer").self_ns, 6000u);
}

TEST(ProfileCompensate, OffLeavesRawTimes) {
  auto p = build(nested(), false);
  EXPECT_EQ(fn(p, "outer").total_ns, 10000u);
  EXPECT_EQ(fn(p, "outer").self_ns, 7200u);
  EXPECT_EQ(fn(p, "slow").total_ns, 2000u);
  EXPECT_EQ(fn(p, "inner").total_ns, 900u);
}

TEST(ProfileCompensate, NeverNegativeAndTheShortfallIsCounted) {
  Seq s;
  s.E(0, OUTER).E(10, INNER).X(20, INNER).X(60, OUTER);  // 60 ns raw, 100 ns nested cost
  auto p = build(s, true);
  EXPECT_EQ(fn(p, "outer").total_ns, 0u);
  EXPECT_EQ(fn(p, "outer").self_ns, 0u);
  EXPECT_EQ(fn(p, "inner").total_ns, 10u);
  EXPECT_EQ(p.compensation.clamped_calls, 1u);
  EXPECT_EQ(p.compensation.residual_ns, 40u);
  EXPECT_EQ(build(nested(), true).compensation.clamped_calls, 0u);
}

// Each call also loses the part of its own probes inside its interval.
TEST(ProfileCompensate, OwnInsideCostTakenOut) {
  analysis::ProfileBuilder b(probes());
  analysis::ProbeCosts c = kCosts;
  c.inside_nop5 = 40;          // inner
  c.inside_emulated = 150;     // outer
  c.inside_single_step = 900;  // slow
  b.compensate(c);
  for (const auto& e : nested().events) b.add(e);
  auto p = b.finish(0, {}, {});
  // inner: 300 + 100 + 500 raw, 40 off each.
  EXPECT_EQ(fn(p, "inner").total_ns, 900u - 3 * 40u);
  EXPECT_EQ(fn(p, "inner").min_ns, 60u);
  // slow: 2000 raw minus its own 900 and one nested inner (100).
  EXPECT_EQ(fn(p, "slow").total_ns, 1000u);
  EXPECT_EQ(fn(p, "slow").self_ns, 1000u - (100u - 40u));  // minus inner's compensated 60
  // outer: 10000 minus its own 150, inner x3 (300) and slow (1000).
  EXPECT_EQ(fn(p, "outer").total_ns, 8550u);
  EXPECT_EQ(p.compensation.clamped_calls, 0u);
}

// Recursion: total counts the outermost activation, which loses the cost
// of the inner activations; every activation's min/max is compensated.
TEST(ProfileCompensate, Recursion) {
  Seq s;
  s.E(0, OUTER).E(1000, OUTER).E(2000, OUTER).X(2500, OUTER).X(4000, OUTER).X(9000, OUTER);
  auto p = build(s, true);
  const auto& o = fn(p, "outer");
  EXPECT_EQ(o.calls, 3u);
  EXPECT_EQ(o.total_ns, 9000u - 2 * 200u);
  EXPECT_EQ(o.min_ns, 500u);
  EXPECT_EQ(o.max_ns, 8600u);
  // selfs: 500 + (3000 - 500 - 200) + (9000 - 3000 - 200)... as inclusive minus callees
  EXPECT_EQ(o.self_ns, 500u + (2800u - 500u) + (8600u - 2800u));
}

// A probe whose path is unknown has no calibrated cost: nothing is taken out.
TEST(ProfileCompensate, UnknownPathCostsNothing) {
  Seq s;
  s.E(0, OUTER).E(100, UNKNOWN).X(200, UNKNOWN).X(1000, OUTER);
  auto p = build(s, true);
  EXPECT_EQ(fn(p, "outer").total_ns, 1000u);
}

// Unfinished calls closed at the end are compensated like the others.
TEST(ProfileCompensate, UnfinishedCalls) {
  Seq s;
  s.E(0, OUTER).E(100, INNER).X(200, INNER);
  auto p = build(s, true, 5000);
  EXPECT_EQ(fn(p, "outer").unfinished, 1u);
  EXPECT_EQ(fn(p, "outer").total_ns, 4900u);
}

TEST(ProfileCompensate, CostsFromHeader) {
  formats::TraceHeader h;
  h.probe_cost_nop5_ns = 1;
  h.probe_cost_emulated_ns = 2;
  h.probe_cost_singlestep_ns = 3;
  auto c = analysis::probe_costs(h);
  EXPECT_EQ(c.of(ProbePath::Nop5), 1u);
  EXPECT_EQ(c.of(ProbePath::Emulated), 2u);
  EXPECT_EQ(c.of(ProbePath::SingleStep), 3u);
  EXPECT_EQ(c.of(ProbePath::Unknown), 0u);
  EXPECT_EQ(c.inside_of(ProbePath::Nop5), 0u);
  h.probe_inside_nop5_ns = 4;
  h.probe_inside_emulated_ns = 5;
  h.probe_inside_singlestep_ns = 6;
  c = analysis::probe_costs(h);
  EXPECT_EQ(c.inside_of(ProbePath::Nop5), 4u);
  EXPECT_EQ(c.inside_of(ProbePath::Emulated), 5u);
  EXPECT_EQ(c.inside_of(ProbePath::SingleStep), 6u);
  EXPECT_EQ(c.inside_of(ProbePath::Unknown), 0u);
  EXPECT_TRUE(c.any());
  EXPECT_FALSE(analysis::probe_costs(formats::TraceHeader{}).any());
}

// The reports state the costs they used, and JSON says whether it was done.
TEST(ProfileCompensate, ReportsStateTheCosts) {
  formats::TraceHeader h;
  h.probe_cost_nop5_ns = 100;
  h.probe_cost_emulated_ns = 200;
  h.probe_cost_singlestep_ns = 15000;
  auto p = build(nested(), true);
  std::vector<std::string> warnings;
  analysis::ReportInput in{h, p, warnings};
  analysis::ReportOptions opt;
  opt.compensated = true;
  std::string text = analysis::render_text(in, opt);
  EXPECT_NE(text.find("compensated: 100 ns per nop5 call (0 ns inside it), 200 ns per emulated "
                      "call (0 ns inside it), 15.0 us per single-step call (0 ns inside it)"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("clamped at 0"), std::string::npos) << text;
  auto doc = nlohmann::json::parse(analysis::render_json(in, opt));
  EXPECT_EQ(doc["compensated"], true);
  EXPECT_EQ(doc["probe_cost_ns"]["nop5"], 100);
  EXPECT_EQ(doc["probe_cost_ns"]["emulated"], 200);
  EXPECT_EQ(doc["probe_cost_ns"]["single_step"], 15000);
  opt.compensated = false;
  EXPECT_EQ(analysis::render_text(in, opt).find("compensated:"), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(analysis::render_json(in, opt))["compensated"], false);
}
