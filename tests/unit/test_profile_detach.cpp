// Relevance-filter decisions (DETACH events) in the profile and the
// reports: collected with their names, the functions' rows marked, their
// calls' trees intact, and said in the text and JSON reports.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "analysis/profile.h"
#include "output/report.h"

using namespace atrace;
using formats::EventKind;

namespace {

constexpr uint32_t kPid = 500, kTid = 501;
enum { MAIN = 1, HOT = 2, SLOW = 3, LIBC = 4 };

std::vector<formats::ProbeInfo> probes() {
  std::vector<formats::ProbeInfo> out;
  const char* names[] = {"", "main", "hot(int)", "slow()", "memcpy"};
  for (uint32_t id = 1; id <= 4; id++) {
    formats::ProbeInfo p;
    p.id = id;
    p.name = names[id];
    p.module = id == LIBC ? "libc.so.6" : "demo";
    if (id == HOT) p.path_kind = formats::ProbePath::Nop5;
    out.push_back(p);
  }
  return out;
}

formats::TraceHeader header() {
  formats::TraceHeader h;
  h.target_command = "./demo";
  h.target_pid = kPid;
  h.start_mono_ns = 1'000'000;
  h.end_mono_ns = 11'000'000;
  // Calibrated on the NOP5 path only: hot's path. memcpy's and probe 9's
  // path is not known: half the typical emulated cost (1 us) comes off.
  h.probe_cost_nop5_ns = 400;
  h.probe_inside_nop5_ns = 150;
  return h;
}

formats::Event call(uint64_t ts, EventKind k, uint32_t id, uint32_t tid = kTid) {
  formats::Event e;
  e.ts = ts;
  e.pid = kPid;
  e.tid = tid;
  e.id = id;
  e.kind = k;
  return e;
}

formats::Event detach(uint64_t ts, uint32_t id, uint8_t reason, uint64_t calls, uint64_t total) {
  formats::Event e = call(ts, EventKind::Detach, id, 0);  // tid 0: the recording's
  e.flags = reason;
  e.arg0 = calls;
  e.arg1 = total;
  return e;
}

// main [1 ms, 10 ms] calls slow twice; slow calls hot 3 times, and hot is
// detached (absolute) at 2.5 ms, while its 3rd call is open: that call's
// exit never comes. memcpy is detached (max-calls) without a recorded call.
analysis::Profile sample() {
  analysis::ProfileBuilder b(probes());
  b.per_thread_rows(true);
  std::vector<formats::Event> evs = {
      call(1'000'000, EventKind::FuncEntry, MAIN),
      call(2'000'000, EventKind::FuncEntry, SLOW),
      call(2'100'000, EventKind::FuncEntry, HOT),
      call(2'100'100, EventKind::FuncExit, HOT),
      call(2'200'000, EventKind::FuncEntry, HOT),
      call(2'200'300, EventKind::FuncExit, HOT),
      call(2'400'000, EventKind::FuncEntry, HOT),
      detach(2'500'000, HOT, 1, 3, 600),
      call(3'000'000, EventKind::FuncExit, SLOW),  // closes hot's open call
      detach(3'500'000, LIBC, 3, 0, 0),
      call(4'000'000, EventKind::FuncEntry, SLOW),
      call(5'000'000, EventKind::FuncExit, SLOW),
      detach(6'000'000, 9, 200, 7, 7'000),  // unknown probe, unknown rule
      call(10'000'000, EventKind::FuncExit, MAIN),
  };
  for (const auto& e : evs) b.add(e);
  return b.finish(11'000'000, {{kTid, kPid, "demo", 0, 0, 11}}, {});
}

const analysis::FunctionStats& fn(const analysis::Profile& p, const std::string& name) {
  for (const auto& f : p.functions)
    if (f.name == name) return f;
  static analysis::FunctionStats none;
  ADD_FAILURE() << "no function " << name;
  return none;
}

}  // namespace

TEST(ProfileDetach, DecisionsAreCollectedNamedAndInTimeOrder) {
  auto p = sample();
  ASSERT_EQ(p.detached.size(), 3u);
  const auto& d = p.detached[0];
  EXPECT_EQ(d.id, uint32_t{HOT});
  EXPECT_EQ(d.name, "hot(int)");
  EXPECT_EQ(d.module, "demo");
  EXPECT_EQ(d.ts, 2'500'000u);
  EXPECT_EQ(d.reason, formats::DetachReason::Absolute);
  EXPECT_EQ(d.calls, 3u);
  EXPECT_EQ(d.total_ns, 600u);
  EXPECT_EQ(d.mean_ns(), 200u);
  EXPECT_EQ(d.path, formats::ProbePath::Nop5);
  EXPECT_EQ(d.net_mean_ns(formats::probe_costs(header())), 50u);
  EXPECT_EQ(p.detached[1].name, "memcpy");
  EXPECT_EQ(p.detached[1].module, "libc.so.6");
  EXPECT_EQ(p.detached[1].mean_ns(), 0u);  // no calls: no division by zero
  EXPECT_EQ(p.detached[2].name, "<probe 9>");
  EXPECT_STREQ(formats::to_string(p.detached[2].reason), "unknown");
  // No thread 0: the events belong to the recording.
  ASSERT_EQ(p.threads.size(), 1u);
  EXPECT_EQ(p.threads[0].tid, kTid);
  EXPECT_EQ(p.events, 14u);
}

TEST(ProfileDetach, RowsAreMarkedAndTheCallTreeStaysWhole) {
  auto p = sample();
  const auto& hot = fn(p, "hot(int)");
  EXPECT_TRUE(hot.detached);
  EXPECT_EQ(hot.detached_ns, 2'500'000u);
  // Its open call was closed by slow's exit: 3 calls, none unfinished.
  EXPECT_EQ(hot.calls, 3u);
  EXPECT_EQ(hot.unfinished, 0u);
  EXPECT_EQ(hot.total_ns, 100u + 300u + 600'000u);
  const auto& slow = fn(p, "slow()");
  EXPECT_FALSE(slow.detached);
  EXPECT_EQ(slow.calls, 2u);
  EXPECT_EQ(slow.total_ns, 2'000'000u);
  EXPECT_EQ(slow.self_ns, 2'000'000u - hot.total_ns);
  const auto& m = fn(p, "main");
  EXPECT_EQ(m.total_ns, 9'000'000u);
  EXPECT_EQ(m.unfinished, 0u);
  EXPECT_EQ(p.orphan_exits, 0u);
  ASSERT_FALSE(p.per_thread.empty());
  for (const auto& f : p.per_thread) EXPECT_EQ(f.detached, f.name == "hot(int)") << f.name;
}

// A call of the detached function still open at the end (a deep recursion
// whose exits stopped with its probes) is closed at the end, unfinished.
TEST(ProfileDetach, OpenRecursionOfADetachedFunctionEndsUnfinished) {
  analysis::ProfileBuilder b(probes());
  b.add(call(100, EventKind::FuncEntry, MAIN));
  for (uint64_t i = 0; i < 5; i++) b.add(call(200 + i, EventKind::FuncEntry, HOT));
  b.add(call(210, EventKind::FuncExit, HOT));
  b.add(detach(300, HOT, 2, 1, 6));
  auto p = b.finish(1'000, {}, {});
  const auto& hot = fn(p, "hot(int)");
  EXPECT_TRUE(hot.detached);
  EXPECT_EQ(hot.calls, 5u);
  EXPECT_EQ(hot.unfinished, 4u);
  EXPECT_EQ(hot.total_ns, 800u);  // outermost activation only: [200, 1000]
  EXPECT_EQ(fn(p, "main").total_ns, 900u);
  EXPECT_EQ(fn(p, "main").self_ns, 100u);
}

TEST(ProfileDetach, JsonReport) {
  auto p = sample();
  formats::TraceHeader h = header();
  std::vector<std::string> warnings;
  auto doc = nlohmann::json::parse(analysis::render_json({h, p, warnings}, {}));
  ASSERT_EQ(doc["detached"].size(), 3u);
  EXPECT_EQ(doc["detached"][0],
            nlohmann::json::parse(
                R"J({"name": "hot(int)", "short_name": "hot", "module": "demo", "time_ns": 1500000,
                                       "rule": "absolute", "calls": 3, "mean_ns": 200,
                                       "net_mean_ns": 50, "path": "nop5",
                                       "total_ns": 600})J"));
  EXPECT_EQ(doc["detached"][1]["rule"], "max-calls");
  EXPECT_EQ(doc["detached"][1]["mean_ns"], 0);
  EXPECT_EQ(doc["detached"][1]["net_mean_ns"], 0);  // never below 0
  EXPECT_EQ(doc["detached"][2]["net_mean_ns"], 500);
  EXPECT_EQ(doc["detached"][2]["rule"], "unknown");
  EXPECT_EQ(doc["detached"][2]["time_ns"], 5'000'000);
  for (const auto& f : doc["functions"]) EXPECT_EQ(f["detached"], f["name"] == "hot(int)") << f;
}

TEST(ProfileDetach, TextReportMarksAndListsThem) {
  auto p = sample();
  formats::TraceHeader h = header();
  std::vector<std::string> warnings;
  std::string text = analysis::render_text({h, p, warnings}, {});
  EXPECT_NE(text.find("hot (detached)\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("slow() (detached)"), std::string::npos) << text;
  auto list = text.find("\nDetached by the relevance filter:\n");
  ASSERT_NE(list, std::string::npos) << text;
  std::string rest = text.substr(list);
  EXPECT_NE(rest.find("    After  Rule       Calls     Mean     Net  Function\n"),
            std::string::npos)
      << text;
  EXPECT_NE(rest.find("  1.50 ms  absolute       3   200 ns   50 ns  hot\n"), std::string::npos)
      << text;
  EXPECT_NE(rest.find("  2.50 ms  max-calls      0     0 ns    0 ns  memcpy [libc.so.6]\n"),
            std::string::npos)
      << text;
  EXPECT_NE(rest.find("  5.00 ms  unknown        7  1.00 us  500 ns  <probe 9>\n"),
            std::string::npos)
      << text;
  EXPECT_NE(rest.find("(detached): the relevance filter removed"), std::string::npos) << text;
  EXPECT_NE(rest.find("partial, counted up to the detach time"), std::string::npos) << text;

  // Per thread too; not with --syscalls, which is about system calls.
  analysis::ReportOptions opt;
  opt.threads = true;
  text = analysis::render_text({h, p, warnings}, opt);
  EXPECT_NE(text.find("hot (detached)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("Detached by the relevance filter:"), std::string::npos) << text;
  opt.threads = false;
  opt.syscalls = true;
  text = analysis::render_text({h, p, warnings}, opt);
  EXPECT_EQ(text.find("Detached by the relevance filter:"), std::string::npos) << text;
  EXPECT_EQ(text.find("(detached)"), std::string::npos) << text;
}
