// ProfileBuilder on hand-made event sequences whose exact numbers are known:
// nesting, recursion, mismatched and orphan exits, unfinished calls.
#include <gtest/gtest.h>

#include "analysis/profile.h"

using namespace atrace;
using formats::EventKind;

namespace {

std::vector<formats::ProbeInfo> probes() {
  std::vector<formats::ProbeInfo> out;
  const char* names[] = {"", "main", "a", "b", "c"};
  for (uint32_t id = 1; id <= 4; id++) {
    formats::ProbeInfo p;
    p.id = id;
    p.name = names[id];
    p.module = id == 4 ? "libc.so.6" : "demo";
    out.push_back(p);
  }
  return out;
}

enum { MAIN = 1, A = 2, B = 3, C = 4 };

// A little language for sequences: E(ts, id) enters, X(ts, id) exits.
struct Seq {
  uint32_t tid = 100;
  std::vector<formats::Event> events;
  Seq& on(uint32_t t) {
    tid = t;
    return *this;
  }
  Seq& E(uint64_t ts, uint32_t id) { return push(ts, id, EventKind::FuncEntry); }
  Seq& X(uint64_t ts, uint32_t id) { return push(ts, id, EventKind::FuncExit); }
  Seq& T(uint64_t ts) { return push(ts, 0, EventKind::ThreadExit); }
  Seq& U(uint64_t ts, uint32_t id) { return push(ts, id, EventKind::Unwind); }
  Seq& push(uint64_t ts, uint32_t id, EventKind k) {
    formats::Event e;
    e.ts = ts;
    e.pid = 100;
    e.tid = tid;
    e.id = id;
    e.kind = k;
    events.push_back(e);
    return *this;
  }
};

analysis::Profile build(const Seq& s, uint64_t end_ts = 0,
                        const std::vector<formats::ThreadInfo>& threads = {},
                        formats::LostCounts lost = {}) {
  analysis::ProfileBuilder b(probes());
  b.per_thread_rows(true);
  for (const auto& e : s.events) b.add(e);
  return b.finish(end_ts, threads, lost);
}

const analysis::FunctionStats& fn(const analysis::Profile& p, const std::string& name) {
  for (const auto& f : p.functions)
    if (f.name == name) return f;
  static analysis::FunctionStats none;
  ADD_FAILURE() << "no function " << name;
  return none;
}

}  // namespace

TEST(ProfileBuilder, Nesting) {
  // main [0,100] calls a [10,40] (which calls b [20,30]) and a [50,60].
  Seq s;
  s.E(0, MAIN).E(10, A).E(20, B).X(30, B).X(40, A).E(50, A).X(60, A).X(100, MAIN);
  auto p = build(s, 200);
  EXPECT_EQ(p.events, 8u);
  EXPECT_EQ(p.orphan_exits, 0u);
  EXPECT_EQ(p.first_ts, 0u);
  EXPECT_EQ(p.last_ts, 100u);

  auto& m = fn(p, "main");
  EXPECT_EQ(m.calls, 1u);
  EXPECT_EQ(m.total_ns, 100u);
  EXPECT_EQ(m.self_ns, 60u);
  EXPECT_EQ(m.unfinished, 0u);

  auto& a = fn(p, "a");
  EXPECT_EQ(a.calls, 2u);
  EXPECT_EQ(a.total_ns, 40u);
  EXPECT_EQ(a.self_ns, 30u);
  EXPECT_EQ(a.min_ns, 10u);
  EXPECT_EQ(a.max_ns, 30u);
  EXPECT_EQ(a.avg_ns(), 20u);

  auto& b = fn(p, "b");
  EXPECT_EQ(b.calls, 1u);
  EXPECT_EQ(b.total_ns, 10u);
  EXPECT_EQ(b.self_ns, 10u);

  // Sorted by total, largest first.
  ASSERT_EQ(p.functions.size(), 3u);
  EXPECT_EQ(p.functions[0].name, "main");
  EXPECT_EQ(p.functions[1].name, "a");
  EXPECT_EQ(p.functions[2].name, "b");
  EXPECT_EQ(p.functions[0].tid, 0u);
  EXPECT_EQ(p.functions[0].module, "demo");
}

TEST(ProfileBuilder, RecursionCountsOutermostTotalOnly) {
  // a [0,100] -> a [10,80] -> a [20,50]; a calls b [60,70] at depth 2.
  Seq s;
  s.E(0, A).E(10, A).E(20, A).X(50, A).E(60, B).X(70, B).X(80, A).X(100, A);
  auto p = build(s);
  auto& a = fn(p, "a");
  EXPECT_EQ(a.calls, 3u);
  EXPECT_EQ(a.total_ns, 100u);  // never more than wall time
  // Self: outer 100-70, middle 70-30-10, inner 30.
  EXPECT_EQ(a.self_ns, 30u + 30u + 30u);
  EXPECT_EQ(a.min_ns, 30u);
  EXPECT_EQ(a.max_ns, 100u);
  auto& b = fn(p, "b");
  EXPECT_EQ(b.total_ns, 10u);
  EXPECT_EQ(b.self_ns, 10u);
}

TEST(ProfileBuilder, IndirectRecursion) {
  // a [0,100] -> b [10,90] -> a [20,50].
  Seq s;
  s.E(0, A).E(10, B).E(20, A).X(50, A).X(90, B).X(100, A);
  auto p = build(s);
  auto& a = fn(p, "a");
  EXPECT_EQ(a.calls, 2u);
  EXPECT_EQ(a.total_ns, 100u);
  EXPECT_EQ(a.self_ns, 20u + 30u);
  auto& b = fn(p, "b");
  EXPECT_EQ(b.total_ns, 80u);
  EXPECT_EQ(b.self_ns, 50u);
}

// Calls past the kernel's nesting limit: counted, untimed, in no time
// column; min and max are the timed calls'.
TEST(ProfileBuilder, UntimedCallsAreCountedNotTimed) {
  Seq s;
  // a (timed, 0-100) -> a (no return probe, at 10) -> b (timed, 20-50).
  s.E(0, A).E(10, A).E(20, B).X(50, B);
  s.push(99, A, EventKind::Unwind);
  s.events.back().flags = static_cast<uint8_t>(formats::UnwindHow::NestingLimit);
  s.events.back().arg0 = 10;
  s.X(100, A);
  auto p = build(s);
  auto& a = fn(p, "a");
  EXPECT_EQ(a.calls, 2u);
  EXPECT_EQ(a.untimed, 1u);
  EXPECT_EQ(a.unfinished, 0u);
  EXPECT_EQ(a.min_ns, 100u);
  EXPECT_EQ(a.max_ns, 100u);
  EXPECT_EQ(a.total_ns, 100u);
  EXPECT_EQ(a.avg_ns(), 100u);
  EXPECT_EQ(a.self_ns, 70u);  // b's 30 ns are a callee's, through the untimed a
  EXPECT_EQ(fn(p, "b").total_ns, 30u);
}

// A call a longjmp left, closed where the recorder saw its thread below it.
TEST(ProfileBuilder, AbandonedCallsEndWhereTheyWereLeft) {
  Seq s;
  s.E(0, MAIN).E(10, A);
  s.push(40, A, EventKind::Unwind);
  s.events.back().flags = static_cast<uint8_t>(formats::UnwindHow::Abandoned);
  s.events.back().arg0 = 10;
  s.X(100, MAIN);
  auto p = build(s, 1000);
  auto& a = fn(p, "a");
  EXPECT_EQ(a.calls, 1u);
  EXPECT_EQ(a.abandoned, 1u);
  EXPECT_EQ(a.unfinished, 0u);
  EXPECT_EQ(a.total_ns, 30u);
}

TEST(ProfileBuilder, MismatchedExitClosesSkippedFrames) {
  // main -> a -> b -> c; c and b never return (longjmp to a), a exits at 50.
  Seq s;
  s.E(0, MAIN).E(10, A).E(20, B).E(30, C).X(50, A).X(60, MAIN);
  auto p = build(s);
  EXPECT_EQ(p.orphan_exits, 0u);
  auto& c = fn(p, "c");
  EXPECT_EQ(c.calls, 1u);
  EXPECT_EQ(c.total_ns, 20u);
  EXPECT_EQ(c.unfinished, 0u);
  auto& b = fn(p, "b");
  EXPECT_EQ(b.total_ns, 30u);
  EXPECT_EQ(b.self_ns, 10u);
  auto& a = fn(p, "a");
  EXPECT_EQ(a.total_ns, 40u);
  EXPECT_EQ(a.self_ns, 10u);
  auto& m = fn(p, "main");
  EXPECT_EQ(m.total_ns, 60u);
  EXPECT_EQ(m.self_ns, 20u);
  EXPECT_EQ(c.module, "libc.so.6");
}

TEST(ProfileBuilder, UnwindClosesCallsAtTheCatch) {
  // main -> a -> b -> c; c throws, b is unwound, a catches at 50 (the
  // UNWIND events come innermost first) and returns at 70.
  Seq s;
  s.E(0, MAIN).E(10, A).E(20, B).E(30, C).U(50, C).U(50, B).X(70, A).X(80, MAIN);
  auto p = build(s);
  auto& c = fn(p, "c");
  EXPECT_EQ(c.calls, 1u);
  EXPECT_EQ(c.unwound, 1u);
  EXPECT_EQ(c.unfinished, 0u);
  EXPECT_EQ(c.total_ns, 20u);
  auto& b = fn(p, "b");
  EXPECT_EQ(b.unwound, 1u);
  EXPECT_EQ(b.total_ns, 30u);
  EXPECT_EQ(b.self_ns, 10u);
  auto& a = fn(p, "a");
  EXPECT_EQ(a.unwound, 0u);
  EXPECT_EQ(a.total_ns, 60u);
  EXPECT_EQ(a.self_ns, 30u);
  EXPECT_EQ(fn(p, "main").unwound, 0u);
  EXPECT_EQ(p.orphan_exits, 0u);
}

TEST(ProfileBuilder, UnwindOfACallBelowTheTopLeavesTheOthersOpen) {
  // b was unwound, then a cleanup called c before the catch reported b:
  // only b ends; c returns later, normally.
  Seq s;
  s.E(0, A).E(10, B).E(20, C).U(30, B).X(40, C).X(50, A);
  auto p = build(s);
  EXPECT_EQ(fn(p, "b").unwound, 1u);
  EXPECT_EQ(fn(p, "b").total_ns, 20u);
  EXPECT_EQ(fn(p, "c").unwound, 0u);
  EXPECT_EQ(fn(p, "c").total_ns, 20u);
  EXPECT_EQ(fn(p, "a").total_ns, 50u);
}

TEST(ProfileBuilder, OrphanExitsAreCountedAndIgnored) {
  // Recording started inside a and main: their exits have no entry.
  Seq s;
  s.E(10, B).X(20, B).X(30, A).E(40, C).X(45, C).X(50, MAIN);
  auto p = build(s);
  EXPECT_EQ(p.orphan_exits, 2u);
  ASSERT_EQ(p.functions.size(), 2u);
  EXPECT_EQ(fn(p, "b").total_ns, 10u);
  EXPECT_EQ(fn(p, "c").total_ns, 5u);
}

TEST(ProfileBuilder, ExitOfFunctionNotOnStackDoesNotDisturbIt) {
  Seq s;
  s.E(0, A).E(10, B).X(15, C).X(20, B).X(30, A);
  auto p = build(s);
  EXPECT_EQ(p.orphan_exits, 1u);
  EXPECT_EQ(fn(p, "a").total_ns, 30u);
  EXPECT_EQ(fn(p, "a").self_ns, 20u);
  EXPECT_EQ(fn(p, "b").total_ns, 10u);
}

TEST(ProfileBuilder, UnfinishedCallsClosedAtEnd) {
  Seq s;
  s.E(0, MAIN).E(10, A).X(20, A).E(30, A);
  auto p = build(s, 100);
  auto& m = fn(p, "main");
  EXPECT_EQ(m.calls, 1u);
  EXPECT_EQ(m.unfinished, 1u);
  EXPECT_EQ(m.total_ns, 100u);
  EXPECT_EQ(m.self_ns, 20u);
  auto& a = fn(p, "a");
  EXPECT_EQ(a.calls, 2u);
  EXPECT_EQ(a.unfinished, 1u);
  EXPECT_EQ(a.total_ns, 80u);
  // Min, Avg and Max are the finished call's: the unfinished one's 70 ns
  // is only a lower bound (issue 31).
  EXPECT_EQ(a.finished_calls(), 1u);
  EXPECT_EQ(a.max_ns, 10u);
  EXPECT_EQ(a.min_ns, 10u);
  EXPECT_EQ(a.avg_ns(), 10u);
  EXPECT_EQ(m.finished_calls(), 0u);
  EXPECT_EQ(m.avg_ns(), 0u);
}

TEST(ProfileBuilder, UnknownEndUsesLastEvent) {
  Seq s;
  s.E(0, A).E(10, B).X(40, B);
  auto p = build(s, 0);
  EXPECT_EQ(fn(p, "a").total_ns, 40u);
  EXPECT_EQ(fn(p, "a").unfinished, 1u);
}

TEST(ProfileBuilder, ThreadExitClosesOpenFrames) {
  // Thread 7 calls pthread_exit from inside b; thread 8 goes on.
  Seq s;
  s.on(7).E(0, A).E(10, B);
  s.on(8).E(15, A);
  s.on(7).T(30);
  s.on(8).X(50, A);
  auto p = build(s, 1000);
  auto& a = fn(p, "a");
  EXPECT_EQ(a.calls, 2u);
  EXPECT_EQ(a.unfinished, 1u);
  EXPECT_EQ(a.total_ns, 30u + 35u);
  EXPECT_EQ(a.self_ns, 10u + 35u);
  auto& b = fn(p, "b");
  EXPECT_EQ(b.unfinished, 1u);
  EXPECT_EQ(b.total_ns, 20u);
}

TEST(ProfileBuilder, PerThreadRowsAndThreadTable) {
  Seq s;
  s.on(2).E(0, A).X(10, A);
  s.on(1).E(5, A).X(35, A);
  s.on(1).E(40, B).X(41, B);
  std::vector<formats::ThreadInfo> threads = {{1, 100, "main", 5, 41, 4},
                                              {2, 100, "worker", 0, 10, 2}};
  formats::LostCounts lost;
  lost.per_cpu = {3, 4};
  auto p = build(s, 50, threads, lost);
  EXPECT_EQ(p.lost_events, 7u);

  auto& a = fn(p, "a");
  EXPECT_EQ(a.calls, 2u);
  EXPECT_EQ(a.total_ns, 40u);
  EXPECT_EQ(a.min_ns, 10u);
  EXPECT_EQ(a.max_ns, 30u);

  ASSERT_EQ(p.per_thread.size(), 3u);
  EXPECT_EQ(p.per_thread[0].tid, 1u);
  EXPECT_EQ(p.per_thread[0].name, "a");
  EXPECT_EQ(p.per_thread[0].total_ns, 30u);
  EXPECT_EQ(p.per_thread[1].tid, 1u);
  EXPECT_EQ(p.per_thread[1].name, "b");
  EXPECT_EQ(p.per_thread[2].tid, 2u);
  EXPECT_EQ(p.per_thread[2].total_ns, 10u);

  ASSERT_EQ(p.threads.size(), 2u);
  EXPECT_EQ(p.threads[0].tid, 1u);
  EXPECT_EQ(p.threads[0].name, "main");
  EXPECT_EQ(p.threads[0].events, 4u);
  EXPECT_EQ(p.threads[1].name, "worker");
  EXPECT_EQ(p.threads[1].pid, 100u);
}

TEST(ProfileBuilder, UnknownProbeIdGetsAPlaceholderName) {
  Seq s;
  s.E(0, 77).X(5, 77);
  auto p = build(s);
  ASSERT_EQ(p.functions.size(), 1u);
  EXPECT_EQ(p.functions[0].name, "<probe 77>");
  EXPECT_EQ(p.functions[0].total_ns, 5u);
}

TEST(ProfileBuilder, SortKeys) {
  using analysis::SortKey;
  EXPECT_EQ(analysis::parse_sort_key("calls"), SortKey::Calls);
  EXPECT_EQ(analysis::parse_sort_key("name"), SortKey::Name);
  EXPECT_FALSE(analysis::parse_sort_key("bogus").has_value());

  Seq s;
  s.E(0, A).X(100, A).E(100, B).X(101, B).E(101, B).X(102, B).E(102, B).X(103, B);
  auto p = build(s);
  auto rows = p.functions;
  analysis::sort_functions(rows, SortKey::Calls);
  EXPECT_EQ(rows[0].name, "b");
  analysis::sort_functions(rows, SortKey::Max);
  EXPECT_EQ(rows[0].name, "a");
  analysis::sort_functions(rows, SortKey::Name);
  EXPECT_EQ(rows[0].name, "a");
  EXPECT_EQ(analysis::parse_sort_key("min"), SortKey::Min);
  analysis::sort_functions(rows, SortKey::Calls);
  analysis::sort_functions(rows, SortKey::Min);  // a 100 ns, b 1 ns
  EXPECT_EQ(rows[0].name, "a");
  // Several keys: equal on the first (no faults at all), the next decides.
  analysis::sort_functions(rows, SortKey::Faults, {SortKey::Calls});
  EXPECT_EQ(rows[0].name, "b");
  analysis::sort_functions(rows, SortKey::Faults, {SortKey::Name});
  EXPECT_EQ(rows[0].name, "a");
  EXPECT_EQ(rows[1].name, "b");
}

// snapshot() while the replay runs (atrace top): the calls ended so far,
// the open ones not yet; taking it changes nothing, and the final profile
// is the one a builder without snapshots gives.
TEST(ProfileBuilder, SnapshotCountsTheCallsEndedSoFar) {
  Seq first, rest;
  first.E(0, MAIN).E(10, A).X(20, A).E(30, A);
  rest.X(40, A).E(45, B).X(48, B).X(50, MAIN);
  analysis::ProfileBuilder b(probes());
  for (const auto& e : first.events) b.add(e);
  for (int i = 0; i < 2; i++) {
    analysis::Profile p = b.snapshot();
    ASSERT_EQ(p.functions.size(), 1u);
    EXPECT_EQ(fn(p, "a").calls, 1u);
    EXPECT_EQ(fn(p, "a").total_ns, 10u);
    EXPECT_EQ(p.events, 4u);
  }
  for (const auto& e : rest.events) b.add(e);
  analysis::Profile now = b.snapshot();
  ASSERT_EQ(now.functions.size(), 3u);
  EXPECT_EQ(fn(now, "a").calls, 2u);
  EXPECT_EQ(fn(now, "a").total_ns, 20u);
  EXPECT_EQ(fn(now, "main").total_ns, 50u);
  EXPECT_EQ(fn(now, "main").self_ns, 27u);
  analysis::Profile end = b.finish(50, {}, {});
  Seq all = first;
  all.events.insert(all.events.end(), rest.events.begin(), rest.events.end());
  analysis::Profile plain = build(all, 50);
  ASSERT_EQ(end.functions.size(), plain.functions.size());
  for (const auto& f : plain.functions) {
    EXPECT_EQ(fn(end, f.name).calls, f.calls) << f.name;
    EXPECT_EQ(fn(end, f.name).total_ns, f.total_ns) << f.name;
    EXPECT_EQ(fn(end, f.name).self_ns, f.self_ns) << f.name;
    EXPECT_EQ(fn(now, f.name).calls, f.calls) << f.name;
  }
}
