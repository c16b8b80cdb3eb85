// ProfileBuilder's memory stays bounded by what the report shows (issue 33,
// "big and long recordings stay safe"): many threads each calling many
// functions many times must not make it hold a row per (thread, function)
// unless --threads asks for those rows, and never one per call. Counted
// with counts_held(), not timed: the rows it keeps are what its memory
// grows with.
#include <gtest/gtest.h>

#include "analysis/profile.h"

using namespace atrace;
using formats::EventKind;

namespace {

constexpr uint32_t kThreads = 200, kFunctions = 50, kRounds = 3;

std::vector<formats::ProbeInfo> probes() {
  std::vector<formats::ProbeInfo> out;
  for (uint32_t id = 1; id <= kFunctions; id++) {
    formats::ProbeInfo p;
    p.id = id;
    p.name = "f" + std::to_string(id);
    p.module = "synth";
    out.push_back(p);
  }
  return out;
}

formats::Event event(uint64_t ts, uint32_t tid, uint32_t id, EventKind kind) {
  formats::Event e;
  e.ts = ts;
  e.pid = 1;
  e.tid = tid;
  e.id = id;
  e.kind = kind;
  return e;
}

// Every thread calls every function kRounds times, each call 10 ns; the
// builder's peak of held counts is sampled after every call.
struct Fed {
  analysis::Profile profile;
  size_t peak_held = 0;
};
Fed feed(bool per_thread) {
  analysis::ProfileBuilder b(probes());
  b.per_thread_rows(per_thread);
  Fed out;
  uint64_t ts = 1000;
  for (uint32_t round = 0; round < kRounds; round++)
    for (uint32_t tid = 1; tid <= kThreads; tid++)
      for (uint32_t id = 1; id <= kFunctions; id++) {
        b.add(event(ts, tid, id, EventKind::FuncEntry));
        b.add(event(ts + 10, tid, id, EventKind::FuncExit));
        ts += 20;
        out.peak_held = std::max(out.peak_held, b.counts_held());
      }
  out.profile = b.finish(ts, {}, {});
  return out;
}

TEST(ProfileMemory, AllThreadsRowsHoldOneCountAFunction) {
  Fed f = feed(false);
  // One CallCounts a function: not kThreads x kFunctions, not a call each.
  EXPECT_EQ(f.peak_held, kFunctions);
  EXPECT_TRUE(f.profile.per_thread.empty());
  ASSERT_EQ(f.profile.functions.size(), kFunctions);
  for (const auto& fn : f.profile.functions) {
    EXPECT_EQ(fn.calls, uint64_t{kThreads} * kRounds) << fn.name;
    EXPECT_EQ(fn.total_ns, uint64_t{kThreads} * kRounds * 10) << fn.name;
    EXPECT_EQ(fn.min_ns, 10u);
    EXPECT_EQ(fn.max_ns, 10u);
  }
  EXPECT_EQ(f.profile.threads.size(), kThreads);
}

TEST(ProfileMemory, PerThreadRowsOnlyWhenAskedAndOnlyWhatWasCalled) {
  Fed f = feed(true);
  // A count per (thread, function it called), plus the all-threads ones:
  // the rows --threads prints, never one per call.
  EXPECT_EQ(f.peak_held, kFunctions + kThreads * kFunctions);
  ASSERT_EQ(f.profile.per_thread.size(), size_t{kThreads} * kFunctions);
  for (const auto& r : f.profile.per_thread) {
    EXPECT_EQ(r.calls, kRounds) << r.name << " " << r.tid;
    EXPECT_EQ(r.total_ns, kRounds * 10u);
  }
}

// A thread that calls one function of many costs one per-thread count,
// not one per function known.
TEST(ProfileMemory, PerThreadCountsAreSparse) {
  analysis::ProfileBuilder b(probes());
  b.per_thread_rows(true);
  uint64_t ts = 1000;
  for (uint32_t tid = 1; tid <= kThreads; tid++) {
    const uint32_t id = kFunctions - tid % 2;  // the last two functions only
    b.add(event(ts, tid, id, EventKind::FuncEntry));
    b.add(event(ts + 10, tid, id, EventKind::FuncExit));
    ts += 20;
  }
  // Slots are numbered in order of first call: the two called take two.
  EXPECT_EQ(b.counts_held(), 2u + kThreads);
  analysis::Profile p = b.finish(ts, {}, {});
  EXPECT_EQ(p.per_thread.size(), size_t{kThreads});
  EXPECT_EQ(p.functions.size(), 2u);
}

}  // namespace
