// The call tree (analysis/call_tree.h) on hand-made event sequences whose
// exact numbers are known: context sensitivity, recursion, orphan and
// mismatched exits, unfinished calls, threads, kernel attribution per node,
// bounded size on long traces; and its agreement with ProfileBuilder on
// random sequences, imperfect ones included.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "analysis/call_tree.h"
#include "analysis/profile.h"

using namespace atrace;
using analysis::CallNode;
using analysis::CallTree;
using formats::EventKind;

namespace {

enum { MAIN = 1, A = 2, B = 3, C = 4 };

std::vector<formats::ProbeInfo> probes() {
  std::vector<formats::ProbeInfo> out;
  const char* names[] = {"", "main", "a", "b", "c"};
  for (uint32_t id = 1; id <= 4; id++) {
    formats::ProbeInfo p;
    p.id = id;
    p.name = names[id];
    p.module = id == C ? "libc.so.6" : "demo";
    p.path_kind = formats::ProbePath::Emulated;
    out.push_back(p);
  }
  return out;
}

formats::TraceHeader header(const std::string& kernel = "") {
  formats::TraceHeader h;
  h.target_command = "demo";
  h.kernel_events = kernel;
  return h;
}

struct Seq {
  uint32_t tid = 100;
  std::vector<formats::Event> events;
  Seq& on(uint32_t t) {
    tid = t;
    return *this;
  }
  Seq& E(uint64_t ts, uint32_t id) { return push(ts, EventKind::FuncEntry, id); }
  Seq& X(uint64_t ts, uint32_t id) { return push(ts, EventKind::FuncExit, id); }
  Seq& T(uint64_t ts) { return push(ts, EventKind::ThreadExit, 0); }
  Seq& U(uint64_t ts, uint32_t id) { return push(ts, EventKind::Unwind, id, 0, 1); }
  Seq& push(uint64_t ts, EventKind k, uint32_t id, uint64_t arg0 = 0, uint8_t flags = 0) {
    formats::Event e;
    e.ts = ts;
    e.pid = 100;
    e.tid = tid;
    e.id = id;
    e.kind = k;
    e.arg0 = arg0;
    e.flags = flags;
    events.push_back(e);
    return *this;
  }
};

CallTree build(const Seq& s, uint64_t end = 0, analysis::CallTreeOptions opt = {},
               const std::string& kernel = "") {
  analysis::CallTreeBuilder b(header(kernel), probes(), opt);
  for (const auto& e : s.events) b.add(e);
  return b.finish(end, {});
}

// The node at a path of names ("main/a/c"); fails the test when missing.
const CallNode& at(const CallTree& t, const std::string& path) {
  uint32_t found = UINT32_MAX;
  t.walk([&](uint32_t i, int) {
    std::string p;
    for (const auto& n : t.path_names(i)) p += (p.empty() ? "" : "/") + n;
    if (p == path) found = i;
    return true;
  });
  static CallNode none;
  if (found == UINT32_MAX) {
    ADD_FAILURE() << "no node " << path;
    return none;
  }
  return t.node(found);
}

std::map<uint32_t, analysis::FunctionTotals> by_id(const CallTree& t) {
  std::map<uint32_t, analysis::FunctionTotals> out;
  for (const auto& f : t.functions()) out[f.id] = f;
  return out;
}

}  // namespace

TEST(CallTree, UnwoundCallsEndAtTheCatchOnTheirPath) {
  // main -> a -> b -> c; c throws, a catches at 50 and returns at 70.
  Seq s;
  s.E(0, MAIN).E(10, A).E(20, B).E(30, C).U(50, C).U(50, B).X(70, A).X(80, MAIN);
  auto t = build(s);
  const auto& c = at(t, "main/a/b/c [libc.so.6]");
  EXPECT_EQ(c.calls, 1u);
  EXPECT_EQ(c.unwound, 1u);
  EXPECT_EQ(c.unfinished, 0u);
  EXPECT_EQ(c.total_ns, 20u);
  EXPECT_EQ(at(t, "main/a/b").unwound, 1u);
  EXPECT_EQ(at(t, "main/a/b").total_ns, 30u);
  EXPECT_EQ(at(t, "main/a").unwound, 0u);
  EXPECT_EQ(at(t, "main/a").self_ns, 30u);
  EXPECT_EQ(t.root().unwound, 0u);  // main's own calls: none unwound
  auto f = by_id(t);
  EXPECT_EQ(f[B].unwound, 1u);
  EXPECT_EQ(f[C].unwound, 1u);
}

TEST(CallTree, SameFunctionUnderTwoCallersIsTwoNodes) {
  // main [0,100]: a [10,40] calls c [20,30]; b [50,90] calls c [60,80].
  Seq s;
  s.E(0, MAIN).E(10, A).E(20, C).X(30, C).X(40, A);
  s.E(50, B).E(60, C).X(80, C).X(90, B).X(100, MAIN);
  auto t = build(s);
  EXPECT_EQ(t.size(), 6u);  // root, main, a, a/c, b, b/c
  const auto& ac = at(t, "main/a/c [libc.so.6]");
  EXPECT_EQ(ac.calls, 1u);
  EXPECT_EQ(ac.total_ns, 10u);
  const auto& bc = at(t, "main/b/c [libc.so.6]");
  EXPECT_EQ(bc.total_ns, 20u);
  EXPECT_EQ(at(t, "main/a").self_ns, 20u);
  EXPECT_EQ(at(t, "main/b").self_ns, 20u);
  const auto& m = at(t, "main");
  EXPECT_EQ(m.total_ns, 100u);
  EXPECT_EQ(m.self_ns, 30u);
  EXPECT_EQ(m.depth, 1u);
  EXPECT_EQ(t.root().total_ns, 100u);
  EXPECT_EQ(t.main_module(), "demo");
  // Children: largest total first.
  ASSERT_EQ(m.children.size(), 2u);
  EXPECT_EQ(t.name(m.children[0]), "b");
  EXPECT_EQ(t.name(m.children[1]), "a");
  // Per function, c is both nodes together.
  auto f = by_id(t);
  EXPECT_EQ(f[C].calls, 2u);
  EXPECT_EQ(f[C].total_ns, 30u);
  EXPECT_EQ(f[C].self_ns, 30u);
  EXPECT_EQ(t.orphan_exits(), 0u);
}

TEST(CallTree, RepeatedCallsAddUpInOneNode) {
  Seq s;
  s.E(0, MAIN);
  for (uint64_t i = 0; i < 5; i++) s.E(10 + i * 10, A).X(15 + i * 10, A);
  s.X(100, MAIN);
  auto t = build(s);
  EXPECT_EQ(t.size(), 3u);
  EXPECT_EQ(at(t, "main/a").calls, 5u);
  EXPECT_EQ(at(t, "main/a").total_ns, 25u);
  EXPECT_EQ(at(t, "main").self_ns, 75u);
}

TEST(CallTree, RecursionIsAPathAndCountsOutermostInFunctionTotals) {
  // a [0,100] -> a [10,80] -> a [20,50]; the inner a calls b [30,40].
  Seq s;
  s.E(0, A).E(10, A).E(20, A).E(30, B).X(40, B).X(50, A).X(80, A).X(100, A);
  auto t = build(s);
  EXPECT_EQ(at(t, "a").total_ns, 100u);
  EXPECT_EQ(at(t, "a/a").total_ns, 70u);
  EXPECT_EQ(at(t, "a/a/a").total_ns, 30u);
  EXPECT_EQ(at(t, "a/a/a/b").total_ns, 10u);
  EXPECT_EQ(at(t, "a").self_ns, 30u);
  EXPECT_EQ(at(t, "a/a").self_ns, 40u);
  EXPECT_EQ(at(t, "a/a/a").self_ns, 20u);
  auto f = by_id(t);
  EXPECT_EQ(f[A].calls, 3u);
  EXPECT_EQ(f[A].total_ns, 100u);  // outermost only: never more than wall time
  EXPECT_EQ(f[A].self_ns, 90u);
  EXPECT_EQ(f[B].total_ns, 10u);
}

TEST(CallTree, IndirectRecursionCountsOutermost) {
  // a [0,100] -> b [10,90] -> a [20,60]
  Seq s;
  s.E(0, A).E(10, B).E(20, A).X(60, A).X(90, B).X(100, A);
  auto t = build(s);
  auto f = by_id(t);
  EXPECT_EQ(f[A].calls, 2u);
  EXPECT_EQ(f[A].total_ns, 100u);
  EXPECT_EQ(f[A].self_ns, 20u + 40u);
  EXPECT_EQ(f[B].total_ns, 80u);
  EXPECT_EQ(at(t, "a/b/a").total_ns, 40u);
}

TEST(CallTree, OrphanExitsAreCountedAndIgnored) {
  // b's entry came before the recording; a is called after.
  Seq s;
  s.X(5, B).X(6, MAIN).E(10, A).X(20, A);
  auto t = build(s);
  EXPECT_EQ(t.orphan_exits(), 2u);
  EXPECT_EQ(t.size(), 2u);
  EXPECT_EQ(at(t, "a").total_ns, 10u);
}

TEST(CallTree, MismatchedExitClosesSkippedFrames) {
  // main [0,100] -> a [10,..] -> b [20,..]; a's exit at 50 (b's lost: longjmp).
  Seq s;
  s.E(0, MAIN).E(10, A).E(20, B).X(50, A).X(100, MAIN);
  auto t = build(s);
  EXPECT_EQ(at(t, "main/a/b").total_ns, 30u);
  EXPECT_EQ(at(t, "main/a").total_ns, 40u);
  EXPECT_EQ(at(t, "main/a").self_ns, 10u);
  EXPECT_EQ(at(t, "main/a/b").unfinished, 0u);
  EXPECT_EQ(t.orphan_exits(), 0u);
}

TEST(CallTree, UnfinishedCallsClosedAtEndAndAtThreadExit) {
  Seq s;
  s.on(1).E(0, MAIN).E(10, A);      // still open at the end (200)
  s.on(2).E(20, B).E(30, C).T(70);  // open at its thread's exit
  auto t = build(s, 200);
  EXPECT_EQ(at(t, "main").total_ns, 200u);
  EXPECT_EQ(at(t, "main").unfinished, 1u);
  EXPECT_EQ(at(t, "main/a").total_ns, 190u);
  EXPECT_EQ(at(t, "b").total_ns, 50u);
  EXPECT_EQ(at(t, "b/c [libc.so.6]").total_ns, 40u);
  EXPECT_EQ(at(t, "b").unfinished, 1u);
  EXPECT_EQ(t.root().unfinished, 2u);  // the top-level calls': main and b
  // The last event's time when the end is unknown (0) or earlier.
  auto early = build(s, 5);
  EXPECT_EQ(at(early, "main").total_ns, 70u);
}

TEST(CallTree, ThreadsMergeOrSplit) {
  Seq s;
  s.on(7).E(0, A).E(10, B).X(20, B).X(30, A);
  s.on(8).E(5, A).E(6, B).X(16, B).X(50, A);
  auto merged = build(s);
  EXPECT_EQ(merged.size(), 3u);
  EXPECT_EQ(at(merged, "a").calls, 2u);
  EXPECT_EQ(at(merged, "a").total_ns, 75u);
  EXPECT_EQ(at(merged, "a/b").total_ns, 20u);

  analysis::CallTreeOptions opt;
  opt.per_thread = true;
  analysis::CallTreeBuilder b(header(), probes(), opt);
  s.on(9).push(40, EventKind::PageFault, 0);  // a thread that calls nothing: no node
  for (const auto& e : s.events) b.add(e);
  formats::ThreadInfo named;
  named.tid = 8;
  named.name = "worker";
  auto split = b.finish(0, {named});
  EXPECT_TRUE(split.per_thread());
  EXPECT_EQ(split.size(), 7u);  // root, 2 threads, 2 x (a, a/b)
  EXPECT_EQ(at(split, "7/a").total_ns, 30u);
  EXPECT_EQ(at(split, "worker-8/a").total_ns, 45u);
  EXPECT_EQ(at(split, "worker-8").kind, CallNode::Kind::Thread);
  EXPECT_EQ(at(split, "worker-8").total_ns, 45u);
  EXPECT_EQ(split.root().total_ns, 75u);
  // Per-function sums are the same either way.
  auto fm = by_id(merged), fs = by_id(split);
  for (uint32_t id : {A, B}) {
    EXPECT_EQ(fm[id].calls, fs[id].calls);
    EXPECT_EQ(fm[id].total_ns, fs[id].total_ns);
    EXPECT_EQ(fm[id].self_ns, fs[id].self_ns);
  }
}

TEST(CallTree, KernelTimesPerNodeInclusiveAndSelf) {
  // main [0,1000] -> a [100,900] sleeps in nanosleep [200,800], switched out
  // blocked [250,750], and takes a fault at 850; main faults at 950.
  constexpr uint64_t kNanosleep = 35;
  Seq s;
  s.E(0, MAIN).E(100, A).push(200, EventKind::SyscallEnter, 0, kNanosleep);
  s.push(250, EventKind::SchedSwitchOut, 0, 0, 1).push(750, EventKind::SchedSwitchIn, 0);
  s.push(800, EventKind::SyscallExit, 0, kNanosleep);
  s.push(850, EventKind::PageFault, 0, 0x1000, formats::kFaultUser).X(900, A);
  s.push(950, EventKind::PageFault, 0, 0x2000, formats::kFaultUser).X(1000, MAIN);
  auto t = build(s, 1000, {}, "sched,syscalls,faults");
  ASSERT_TRUE(t.has_kernel());
  const auto& a = at(t, "main/a");
  EXPECT_EQ(a.kernel.offcpu_blocked_ns, 500u);
  EXPECT_EQ(a.kernel.syscall_ns, 600u);
  EXPECT_EQ(a.kernel.syscalls, 1u);
  EXPECT_EQ(a.kernel.faults, 1u);
  EXPECT_EQ(a.self_kernel.faults, 1u);
  EXPECT_EQ(a.self_kernel.offcpu_ns(), 500u);
  const auto& m = at(t, "main");
  EXPECT_EQ(m.kernel.offcpu_ns(), 500u);
  EXPECT_EQ(m.kernel.faults, 2u);
  EXPECT_EQ(m.self_kernel.faults, 1u);
  EXPECT_EQ(m.self_kernel.syscalls, 0u);
  // Wall times are unchanged by kernel events.
  EXPECT_EQ(a.total_ns, 800u);
  EXPECT_EQ(t.root().kernel.faults, 2u);
}

TEST(CallTree, UnknownKindsAndDetachChangeNothing) {
  Seq s;
  s.E(0, A).push(5, static_cast<EventKind>(29), 0).X(10, A);
  s.push(12, EventKind::Detach, A, 1, 1);
  s.events.back().tid = 0;
  auto t = build(s);
  EXPECT_EQ(t.size(), 2u);
  EXPECT_EQ(at(t, "a").total_ns, 10u);
}

TEST(CallTree, SizeIsBoundedByCallPathsNotEvents) {
  analysis::CallTreeBuilder b(header(), probes());
  formats::Event e;
  e.tid = 1;
  uint64_t ts = 0;
  for (int i = 0; i < 200000; i++) {
    for (uint32_t id : {MAIN, A, B}) {
      e.kind = EventKind::FuncEntry;
      e.id = id;
      e.ts = ts++;
      b.add(e);
    }
    for (uint32_t id : {B, A, MAIN}) {
      e.kind = EventKind::FuncExit;
      e.id = id;
      e.ts = ts++;
      b.add(e);
    }
  }
  auto t = b.finish(ts, {});
  EXPECT_EQ(t.size(), 4u);
  EXPECT_EQ(at(t, "main/a/b").calls, 200000u);
}

TEST(CallTree, CompensationLikeTheProfile) {
  // main [0,1000] -> a [100,400] x2 (every entry is emulated: cost 50 a
  // call, 20 of it inside the call's own interval).
  Seq s;
  s.E(0, MAIN).E(100, A).X(400, A).E(500, A).X(800, A).X(1000, MAIN);
  analysis::CallTreeOptions opt;
  opt.compensate.emulated = 50;
  opt.compensate.inside_emulated = 20;
  auto t = build(s, 0, opt);
  analysis::ProfileBuilder p(probes());
  p.compensate(opt.compensate);
  for (const auto& e : s.events) p.add(e);
  auto prof = p.finish(0, {}, {});
  EXPECT_EQ(at(t, "main").total_ns, 1000u - 20u - 2 * 50u);
  EXPECT_EQ(at(t, "main/a").total_ns, 2u * (300u - 20u));
  for (const auto& f : prof.functions) {
    if (f.name == "main") {
      EXPECT_EQ(f.total_ns, 880u);
      EXPECT_EQ(f.self_ns, at(t, "main").self_ns);
    }
    if (f.name == "a") {
      EXPECT_EQ(f.total_ns, at(t, "main/a").total_ns);
    }
  }
}

// On random event sequences (several threads, recursion, lost exits, exits
// without entries, calls left open, thread exits), the tree's per-function
// sums equal ProfileBuilder's numbers exactly.
TEST(CallTree, AgreesWithTheProfileOnRandomSequences) {
  std::mt19937 rng(12345);
  for (int round = 0; round < 300; round++) {
    Seq s;
    std::map<uint32_t, std::vector<uint32_t>> stacks;
    uint64_t ts = 0;
    int n = 20 + static_cast<int>(rng() % 200);
    for (int i = 0; i < n; i++) {
      uint32_t tid = 1 + rng() % 3;
      auto& st = stacks[tid];
      s.on(tid);
      ts += rng() % 50;
      uint32_t r = rng() % 100;
      uint32_t id = 1 + rng() % 4;
      if (r < 50 || st.empty()) {
        if (r < 5 && st.empty()) {
          s.X(ts, id);  // orphan
        } else {
          s.E(ts, id);
          st.push_back(id);
        }
      } else if (r < 85) {
        s.X(ts, st.back());
        st.pop_back();
      } else if (r < 93) {
        // An exit deeper in the stack: the frames above it lost theirs.
        size_t k = rng() % st.size();
        s.X(ts, st[k]);
        // It closes the innermost frame of that function and those above.
        auto it = std::find(st.rbegin(), st.rend(), st[k]);
        st.erase(std::prev(it.base()), st.end());
      } else if (r < 96) {
        s.T(ts);
        st.clear();
      } else {
        s.X(ts, id);  // maybe an orphan, maybe a mismatch
        auto it = std::find(st.rbegin(), st.rend(), id);
        if (it != st.rend()) st.erase(std::prev(it.base()), st.end());
      }
    }
    uint64_t end = ts + rng() % 100;
    auto t = build(s, end);
    analysis::ProfileBuilder pb(probes());
    for (const auto& e : s.events) pb.add(e);
    auto prof = pb.finish(end, {}, {});
    auto f = by_id(t);
    ASSERT_EQ(f.size(), prof.functions.size()) << "round " << round;
    for (const auto& p : prof.functions) {
      const auto& g = f[p.id];
      EXPECT_EQ(g.calls, p.calls) << "round " << round << " " << p.name;
      EXPECT_EQ(g.unfinished, p.unfinished) << "round " << round << " " << p.name;
      EXPECT_EQ(g.total_ns, p.total_ns) << "round " << round << " " << p.name;
      EXPECT_EQ(g.self_ns, p.self_ns) << "round " << round << " " << p.name;
    }
    EXPECT_EQ(t.orphan_exits(), prof.orphan_exits) << "round " << round;
  }
}
