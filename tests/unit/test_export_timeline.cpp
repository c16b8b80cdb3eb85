// The spans the timeline exporters draw (analysis/export_timeline.h), on
// hand-made event sequences: they nest on every thread, follow the profile's
// rules for mismatched exits and unfinished calls, repair lost kernel events,
// and add up to ProfileBuilder's calls, total and self times.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "analysis/export_timeline.h"
#include "analysis/profile.h"

using namespace atrace;
using analysis::Span;
using analysis::SpanClose;
using analysis::SpanEnd;
using analysis::SpanKind;
using formats::EventKind;

namespace {

struct Recorded {
  uint32_t tid;
  Span span;
  SpanClose close;
};

// Collects closed spans and checks, as they come, that each thread's spans
// open and close like a stack.
class Collect : public analysis::TimelineSink {
 public:
  void begin(uint32_t, uint32_t tid, const Span& s) override { open[tid].push_back(s); }
  void end(uint32_t, uint32_t tid, const Span& s, const SpanClose& c) override {
    auto& stack = open[tid];
    EXPECT_FALSE(stack.empty()) << "end without begin on " << tid;
    if (stack.empty()) return;
    EXPECT_EQ(stack.back().start, s.start) << "not the innermost span";
    EXPECT_EQ(stack.back().kind, s.kind);
    EXPECT_GE(c.ts, s.start);
    EXPECT_GE(c.ts, last_end[tid]) << "ends out of order";
    last_end[tid] = c.ts;
    stack.pop_back();
    done.push_back({tid, s, c});
  }
  std::map<uint32_t, std::vector<Span>> open;
  std::map<uint32_t, uint64_t> last_end;
  std::vector<Recorded> done;
};

struct Seq {
  uint32_t tid = 100;
  std::vector<formats::Event> events;
  Seq& on(uint32_t t) {
    tid = t;
    return *this;
  }
  Seq& push(uint64_t ts, EventKind k, uint32_t id = 0, uint64_t a0 = 0, uint64_t a1 = 0,
            uint8_t flags = 0) {
    formats::Event e;
    e.ts = ts;
    e.pid = 100;
    e.tid = tid;
    e.id = id;
    e.kind = k;
    e.arg0 = a0;
    e.arg1 = a1;
    e.flags = flags;
    events.push_back(e);
    return *this;
  }
  Seq& E(uint64_t ts, uint32_t id) { return push(ts, EventKind::FuncEntry, id); }
  Seq& X(uint64_t ts, uint32_t id) { return push(ts, EventKind::FuncExit, id); }
  Seq& S(uint64_t ts, uint64_t nr) { return push(ts, EventKind::SyscallEnter, 0, nr); }
  Seq& R(uint64_t ts, uint64_t nr, int64_t ret) {
    return push(ts, EventKind::SyscallExit, 0, nr, static_cast<uint64_t>(ret));
  }
  Seq& Out(uint64_t ts, uint8_t state) {
    return push(ts, EventKind::SchedSwitchOut, 0, 0, 0, state);
  }
  Seq& In(uint64_t ts) { return push(ts, EventKind::SchedSwitchIn); }
};

Collect run(const Seq& s, uint64_t end_ts = 0) {
  Collect c;
  analysis::Timeline t(c);
  for (const auto& e : s.events) t.add(e);
  t.finish(end_ts);
  for (const auto& [tid, stack] : c.open) EXPECT_TRUE(stack.empty()) << "left open on " << tid;
  return c;
}

TEST(ExportTimeline, NestedCallsEndInnermostFirst) {
  auto c = run(Seq().E(10, 1).E(20, 2).X(30, 2).E(40, 2).X(50, 2).X(60, 1));
  ASSERT_EQ(c.done.size(), 3u);
  EXPECT_EQ(c.done[0].span.start, 20u);
  EXPECT_EQ(c.done[0].close.ts, 30u);
  EXPECT_EQ(c.done[2].span.id, 1u);
  EXPECT_EQ(c.done[2].close.ts, 60u);
  for (const auto& r : c.done) EXPECT_EQ(r.close.how, SpanEnd::Closed);
}

TEST(ExportTimeline, ExitOfACallerAbandonsTheCallsAboveIt) {
  // 1 -> 2 -> 3, then 1 exits (longjmp out of 3): 3 and 2 end there too.
  auto c = run(Seq().E(10, 1).E(20, 2).E(30, 3).X(40, 1));
  ASSERT_EQ(c.done.size(), 3u);
  EXPECT_EQ(c.done[0].span.id, 3u);
  EXPECT_EQ(c.done[0].close.how, SpanEnd::Abandoned);
  EXPECT_EQ(c.done[1].span.id, 2u);
  EXPECT_EQ(c.done[1].close.how, SpanEnd::Abandoned);
  EXPECT_EQ(c.done[2].close.how, SpanEnd::Closed);
  for (const auto& r : c.done) EXPECT_EQ(r.close.ts, 40u);
}

TEST(ExportTimeline, OrphanExitDrawsNothingAndUnfinishedCallsCloseAtTheEnd) {
  auto c = run(Seq().X(5, 2).E(10, 1).E(20, 2), 100);
  ASSERT_EQ(c.done.size(), 2u);
  for (const auto& r : c.done) {
    EXPECT_EQ(r.close.ts, 100u);
    EXPECT_EQ(r.close.how, SpanEnd::TraceEnd);
    EXPECT_TRUE(analysis::unfinished(r.close.how));
  }
  // An end before the last event (a truncated recording) means the last event.
  auto t = run(Seq().E(10, 1).E(20, 2), 15);
  EXPECT_EQ(t.done[0].close.ts, 20u);
}

TEST(ExportTimeline, ThreadExitClosesItsCalls) {
  Seq s;
  s.E(10, 1).push(50, EventKind::ThreadExit).on(200).E(60, 1).X(70, 1);
  auto c = run(s, 1000);
  ASSERT_EQ(c.done.size(), 2u);
  EXPECT_EQ(c.done[0].tid, 100u);
  EXPECT_EQ(c.done[0].close.ts, 50u);
  EXPECT_EQ(c.done[0].close.how, SpanEnd::ThreadExit);
}

TEST(ExportTimeline, SystemCallsAndOffCpuNestInsideCalls) {
  // read() blocks: off-CPU inside the system call inside the function.
  auto c = run(Seq().E(10, 1).S(20, 0).Out(25, 1).In(35).R(40, 0, 5).Out(45, 0).In(47).X(50, 1));
  ASSERT_EQ(c.done.size(), 4u);
  EXPECT_EQ(c.done[0].span.kind, SpanKind::OffCpu);
  EXPECT_TRUE(c.done[0].span.blocked());
  EXPECT_EQ(c.done[1].span.kind, SpanKind::Syscall);
  EXPECT_TRUE(c.done[1].close.has_ret);
  EXPECT_EQ(c.done[1].close.ret, 5);
  EXPECT_EQ(c.done[2].span.kind, SpanKind::OffCpu);
  EXPECT_FALSE(c.done[2].span.blocked());  // preempted
  EXPECT_EQ(c.done[3].span.kind, SpanKind::Function);
}

TEST(ExportTimeline, LostKernelEventsAreRepairedWhereTheThreadRunsAgain) {
  // The switch-in and the syscall exit were lost: the function exit shows
  // the thread running in user space.
  auto c = run(Seq().E(10, 1).S(20, 0).Out(25, 1).X(50, 1));
  ASSERT_EQ(c.done.size(), 3u);
  EXPECT_EQ(c.done[0].span.kind, SpanKind::OffCpu);
  EXPECT_EQ(c.done[0].close.ts, 50u);
  EXPECT_EQ(c.done[0].close.how, SpanEnd::Repaired);
  EXPECT_EQ(c.done[1].close.how, SpanEnd::Repaired);
  EXPECT_FALSE(c.done[1].close.has_ret);
  EXPECT_EQ(c.done[2].close.how, SpanEnd::Closed);
}

TEST(ExportTimeline, TheProbesOwnSystemCallsAreNotSpans) {
  // uretprobe (335): the function's exit event happens inside it.
  auto c = run(Seq().E(10, 1).S(20, 335).X(21, 1).R(22, UINT64_MAX, 0));
  ASSERT_EQ(c.done.size(), 1u);
  EXPECT_EQ(c.done[0].span.kind, SpanKind::Function);
}

TEST(ExportTimeline, NonBoundaryEventsAreLeftForInstants) {
  Collect c;
  analysis::Timeline t(c);
  formats::Event e;
  e.tid = 1;
  e.kind = EventKind::PageFault;
  EXPECT_FALSE(t.add(e));
  e.kind = EventKind::Detach;
  e.tid = 0;
  EXPECT_FALSE(t.add(e));
  e.kind = EventKind::FuncEntry;
  e.tid = 1;
  EXPECT_TRUE(t.add(e));
}

// Random call sequences with recursion, unwinding exits, orphan exits,
// kernel events and thread exits: per function, the spans' count, the sum of
// the outermost activations and the self times equal the profile's.
TEST(ExportTimeline, AddsUpToTheProfile) {
  std::mt19937 rng(7);
  std::vector<formats::ProbeInfo> probes;
  for (uint32_t id = 1; id <= 4; ++id) {
    formats::ProbeInfo p;
    p.id = id;
    p.name = "f" + std::to_string(id);
    probes.push_back(p);
  }
  for (int round = 0; round < 50; ++round) {
    Seq s;
    uint64_t ts = 1000;
    std::map<uint32_t, std::vector<uint32_t>> stacks;
    for (int i = 0; i < 400; ++i) {
      uint32_t tid = 100 + rng() % 3;
      s.on(tid);
      ts += 1 + rng() % 50;
      auto& st = stacks[tid];
      unsigned r = rng() % 20;
      if (r < 8) {
        uint32_t id = 1 + rng() % 4;
        s.E(ts, id);
        st.push_back(id);
      } else if (r < 14 && !st.empty()) {
        // usually the innermost, sometimes an outer one (unwinding)
        size_t k = rng() % 4 ? st.size() - 1 : rng() % st.size();
        s.X(ts, st[k]);
        st.resize(k);
      } else if (r == 14) {
        s.X(ts, 1 + rng() % 4);  // maybe an orphan
        st.clear();              // (the stacks here only steer the choices)
      } else if (r < 18) {
        s.S(ts, rng() % 3);
        if (rng() % 2) s.Out(ts + 1, static_cast<uint8_t>(rng() % 2)).In(ts + 2);
        if (rng() % 4) s.R(ts + 3, 0, 0);
        ts += 3;
      } else if (r == 18) {
        s.push(ts, EventKind::ThreadExit);
        st.clear();
      }
    }
    const uint64_t end = ts + 100;
    Collect c = run(s, end);
    analysis::ProfileBuilder builder(probes);
    for (const auto& e : s.events) builder.add(e);
    auto profile = builder.finish(end, {}, {});

    // Sums from the spans: calls, total (outermost activations per thread),
    // self (minus the directly nested calls).
    std::map<uint32_t, uint64_t> calls, total, self, unfinished;
    std::map<uint32_t, std::vector<const Recorded*>> by_thread;
    for (const auto& r : c.done)
      if (r.span.kind == SpanKind::Function) by_thread[r.tid].push_back(&r);
    for (auto& [tid, spans] : by_thread) {
      std::sort(spans.begin(), spans.end(), [](const Recorded* a, const Recorded* b) {
        return a->span.start != b->span.start ? a->span.start < b->span.start
                                              : a->close.ts > b->close.ts;
      });
      std::vector<const Recorded*> stack;
      std::map<const Recorded*, uint64_t> child;
      for (const Recorded* r : spans) {
        // Every event has its own time here, so a span's enclosing spans
        // are the open ones that end after it begins, no earlier than it ends.
        while (!stack.empty() &&
               (stack.back()->close.ts <= r->span.start || stack.back()->close.ts < r->close.ts))
          stack.pop_back();
        uint64_t dur = r->close.ts - r->span.start;
        bool outermost = true;
        for (const Recorded* o : stack)
          if (o->span.id == r->span.id) outermost = false;
        if (!stack.empty()) child[stack.back()] += dur;
        calls[r->span.id]++;
        if (outermost) total[r->span.id] += dur;
        if (analysis::unfinished(r->close.how)) unfinished[r->span.id]++;
        stack.push_back(r);
      }
      for (const Recorded* r : spans) {
        uint64_t dur = r->close.ts - r->span.start;
        self[r->span.id] += dur > child[r] ? dur - child[r] : 0;
      }
    }
    for (const auto& f : profile.functions) {
      SCOPED_TRACE("round " + std::to_string(round) + " " + f.name);
      EXPECT_EQ(calls[f.id], f.calls);
      EXPECT_EQ(total[f.id], f.total_ns);
      EXPECT_EQ(self[f.id], f.self_ns);
      EXPECT_EQ(unfinished[f.id], f.unfinished);
    }
  }
}

}  // namespace
