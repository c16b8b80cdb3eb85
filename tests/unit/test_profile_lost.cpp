// Lost events (ring buffer full) on hand-made sequences: the footer counts
// them per CPU, so the threads that ran on a CPU with losses, and their
// functions, are marked partial in the profile, the text report and JSON.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "analysis/profile.h"
#include "output/report.h"

using namespace atrace;
using formats::EventKind;
using nlohmann::json;

namespace {

std::vector<formats::ProbeInfo> probes() {
  std::vector<formats::ProbeInfo> out;
  const char* names[] = {"", "main", "a", "b"};
  for (uint32_t id = 1; id <= 3; id++) {
    formats::ProbeInfo p;
    p.id = id;
    p.name = names[id];
    p.module = "demo";
    out.push_back(p);
  }
  return out;
}

enum { MAIN = 1, A = 2, B = 3 };

struct Seq {
  uint32_t tid = 100;
  uint16_t cpu = 0;
  std::vector<formats::Event> events;
  Seq& on(uint32_t t, uint16_t c) {
    tid = t;
    cpu = c;
    return *this;
  }
  Seq& E(uint64_t ts, uint32_t id) { return push(ts, id, EventKind::FuncEntry); }
  Seq& X(uint64_t ts, uint32_t id) { return push(ts, id, EventKind::FuncExit); }
  Seq& push(uint64_t ts, uint32_t id, EventKind k) {
    formats::Event e;
    e.ts = ts;
    e.pid = 100;
    e.tid = tid;
    e.cpu = cpu;
    e.id = id;
    e.kind = k;
    events.push_back(e);
    return *this;
  }
};

// Thread 100 on CPU 0: main [0, 100] calls a [10, 20]. Thread 200 on CPU 1:
// main [0, ...) calls b [5, 15], main's exit lost. Thread 300 starts on CPU
// 0 and moves to CPU 2: a [0, 30].
Seq three_threads() {
  Seq s;
  s.on(100, 0).E(0, MAIN).E(10, A).X(20, A).X(100, MAIN);
  s.on(200, 1).E(0, MAIN).E(5, B).X(15, B);
  s.on(300, 0).E(0, A).on(300, 2).X(30, A);
  return s;
}

analysis::Profile build(const Seq& s, formats::LostCounts lost) {
  analysis::ProfileBuilder b(probes());
  b.per_thread_rows(true);
  for (const auto& e : s.events) b.add(e);
  return b.finish(200, {}, lost);
}

const analysis::FunctionStats& row(const std::vector<analysis::FunctionStats>& rows,
                                   const std::string& name, uint32_t tid = 0) {
  for (const auto& f : rows)
    if (f.name == name && f.tid == tid) return f;
  static analysis::FunctionStats none;
  ADD_FAILURE() << "no row " << name << " tid " << tid;
  return none;
}

const analysis::ThreadSummary& thread(const analysis::Profile& p, uint32_t tid) {
  for (const auto& t : p.threads)
    if (t.tid == tid) return t;
  static analysis::ThreadSummary none;
  ADD_FAILURE() << "no thread " << tid;
  return none;
}

TEST(ProfileLost, ThreadsOnACpuWithLossesAndTheirFunctionsArePartial) {
  // 3 events lost on CPU 1, 1 on CPU 2, none on CPU 0.
  analysis::Profile p = build(three_threads(), {{0, 3, 1}});
  EXPECT_EQ(p.lost_events, 4u);
  EXPECT_FALSE(thread(p, 100).partial);
  EXPECT_TRUE(thread(p, 200).partial);
  EXPECT_TRUE(thread(p, 300).partial) << "moved to CPU 2, where one event was lost";
  // Per thread: the rows of thread 200 and 300 only.
  EXPECT_FALSE(row(p.per_thread, "main", 100).partial);
  EXPECT_FALSE(row(p.per_thread, "a", 100).partial);
  EXPECT_TRUE(row(p.per_thread, "main", 200).partial);
  EXPECT_TRUE(row(p.per_thread, "b", 200).partial);
  EXPECT_TRUE(row(p.per_thread, "a", 300).partial);
  // All threads: partial when any of its threads is.
  EXPECT_TRUE(row(p.functions, "main").partial);
  EXPECT_TRUE(row(p.functions, "a").partial);
  EXPECT_TRUE(row(p.functions, "b").partial);
  // The numbers themselves are what the events say: main 100 ns on thread
  // 100 and unfinished [0, 200] on thread 200.
  const auto& main_row = row(p.functions, "main");
  EXPECT_EQ(main_row.calls, 2u);
  EXPECT_EQ(main_row.unfinished, 1u);
  EXPECT_EQ(main_row.total_ns, 300u);
  EXPECT_EQ(row(p.functions, "b").total_ns, 10u);
  EXPECT_EQ(row(p.functions, "a").calls, 2u);
  EXPECT_EQ(row(p.functions, "a").total_ns, 40u);
}

TEST(ProfileLost, OnlyTheThreadOfTheLossyCpuIsPartial) {
  analysis::Profile p = build(three_threads(), {{0, 5, 0}});
  EXPECT_FALSE(thread(p, 100).partial);
  EXPECT_TRUE(thread(p, 200).partial);
  EXPECT_FALSE(thread(p, 300).partial);
  EXPECT_TRUE(row(p.functions, "main").partial);
  EXPECT_FALSE(row(p.functions, "a").partial);
  EXPECT_TRUE(row(p.functions, "b").partial);
}

TEST(ProfileLost, NoLossesOrUnknownLossesMarkNothing) {
  for (const formats::LostCounts& lost : {formats::LostCounts{{0, 0, 0}}, formats::LostCounts{}}) {
    analysis::Profile p = build(three_threads(), lost);
    for (const auto& t : p.threads) EXPECT_FALSE(t.partial) << t.tid;
    for (const auto& f : p.functions) EXPECT_FALSE(f.partial) << f.name;
    for (const auto& f : p.per_thread) EXPECT_FALSE(f.partial) << f.name << " " << f.tid;
  }
}

// Issue 18: a thread's Gap event says where its events were lost. Thread
// 100's call of a begun at 10 is cut at the gap (unfinished), at the
// thread's last event before it (its own entry at 10); a's exit at
// 90, whose entry was lost, is an orphan, not a 80 ns a -> a recursion.
// Only the thread with the gap is partial, even where the per-CPU counts
// are unknown (a killed recorder) or blame no CPU of it.
TEST(ProfileLost, AGapMarksItsThreadPartialAndPairsNothingAcrossIt) {
  for (const formats::LostCounts& lost : {formats::LostCounts{{0, 0, 0}}, formats::LostCounts{}}) {
    Seq s;
    s.on(100, 0).E(0, MAIN).E(10, A);
    s.push(30, 0, EventKind::Gap);
    s.events.back().arg0 = 2;
    s.E(40, B).X(50, B).X(90, A).X(100, MAIN);
    s.on(200, 1).E(0, A).X(5, A);
    analysis::Profile p = build(s, lost);
    EXPECT_TRUE(thread(p, 100).partial);
    EXPECT_FALSE(thread(p, 200).partial);
    EXPECT_TRUE(row(p.per_thread, "a", 100).partial);
    EXPECT_FALSE(row(p.per_thread, "a", 200).partial);
    EXPECT_TRUE(row(p.functions, "a").partial);
    const auto& a = row(p.per_thread, "a", 100);
    EXPECT_EQ(a.calls, 1u);
    EXPECT_EQ(a.unfinished, 1u);
    EXPECT_EQ(a.max_ns, 0u) << "cut before the gap, not stretched to a later exit";
    EXPECT_EQ(row(p.per_thread, "main", 100).unfinished, 1u);
    EXPECT_EQ(row(p.per_thread, "b", 100).calls, 1u);
    EXPECT_EQ(p.orphan_exits, 2u);  // a at 90, main at 100
  }
}

TEST(ProfileLost, TextAndJsonReportsSayWhichArePartial) {
  analysis::Profile p = build(three_threads(), {{0, 5, 0}});
  formats::TraceHeader h;
  std::vector<std::string> warnings;
  analysis::ReportInput in{h, p, warnings};
  analysis::ReportOptions opt;
  std::string text = analysis::render_text(in, opt);
  EXPECT_NE(text.find("main (partial)"), std::string::npos) << text;
  EXPECT_NE(text.find("b (partial)"), std::string::npos) << text;
  EXPECT_EQ(text.find("a (partial)"), std::string::npos) << text;
  EXPECT_NE(text.find("(partial): events of the function's thread were lost"), std::string::npos)
      << text;
  opt.threads = true;
  text = analysis::render_text(in, opt);
  EXPECT_NE(text.find("Thread 200: 3 events (partial)"), std::string::npos) << text;
  EXPECT_NE(text.find("Thread 100: 4 events\n"), std::string::npos) << text;

  json doc = json::parse(analysis::render_json(in, opt));
  std::map<std::string, bool> partial;
  for (const auto& f : doc["functions"]) {
    partial[f["name"]] = f["partial"];
    for (const auto& t : f["per_thread"])
      EXPECT_EQ(t["partial"], t["tid"] == 200) << f["name"] << " " << t["tid"];
  }
  EXPECT_EQ(partial, (std::map<std::string, bool>{{"main", true}, {"a", false}, {"b", true}}));
  for (const auto& t : doc["threads"]) EXPECT_EQ(t["partial"], t["tid"] == 200) << t["tid"];
}

}  // namespace
