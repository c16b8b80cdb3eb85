// The call replay (analysis/call_replay.h) on hand-built event sequences:
// each rule for imperfect traces, with the exact callbacks its listeners
// get, in order.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/call_replay.h"

using namespace atrace;
using analysis::CallEnd;
using formats::EventKind;

namespace {

enum { MAIN = 1, A = 2, B = 3 };

std::vector<formats::ProbeInfo> probes() {
  std::vector<formats::ProbeInfo> out;
  for (uint32_t id = 1; id <= 3; id++) {
    formats::ProbeInfo p;
    p.id = id;
    p.name = "f" + std::to_string(id);
    p.path_kind = formats::ProbePath::Emulated;
    out.push_back(p);
  }
  return out;
}

struct Seq {
  uint32_t tid = 100;
  std::vector<formats::Event> events;
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
  Seq& U(uint64_t ts, uint32_t id) { return push(ts, EventKind::Unwind, id); }
  // The recorder's stack-pointer rule: the call of `id` entered at `entry`
  // was left (Abandoned) or had no return probe (NestingLimit).
  Seq& Left(uint64_t ts, uint32_t id, uint64_t entry) {
    return push(ts, EventKind::Unwind, id, entry, 0,
                static_cast<uint8_t>(formats::UnwindHow::Abandoned));
  }
  Seq& NoRet(uint64_t ts, uint32_t id, uint64_t entry) {
    return push(ts, EventKind::Unwind, id, entry, 0,
                static_cast<uint8_t>(formats::UnwindHow::NestingLimit));
  }
  Seq& Gap(uint64_t ts, uint64_t lost) { return push(ts, EventKind::Gap, 0, lost); }
};

const char* name(CallEnd how) {
  switch (how) {
    case CallEnd::Returned: return "returned";
    case CallEnd::Abandoned: return "abandoned";
    case CallEnd::Untimed: return "untimed";
    case CallEnd::Unwound: return "unwound";
    case CallEnd::ThreadExit: return "thread-exit";
    case CallEnd::TraceEnd: return "trace-end";
    case CallEnd::Gap: return "gap";
    case CallEnd::Exec: return "exec";
  }
  return "?";
}

const char* name(analysis::IntervalEnd how) {
  switch (how) {
    case analysis::IntervalEnd::Closed: return "closed";
    case analysis::IntervalEnd::Repaired: return "repaired";
    case analysis::IntervalEnd::ThreadExit: return "thread-exit";
    case analysis::IntervalEnd::TraceEnd: return "trace-end";
  }
  return "?";
}

// Every callback as one line of text: what a listener sees, in order.
class Log : public analysis::ReplayListener {
 public:
  void on_call_begin(const analysis::ReplayThread& t, const analysis::OpenCall& c) override {
    add("begin f" + n(c.id) + " tid=" + n(t.tid) + " at=" + n(c.start) +
        " depth=" + n(t.stack.size() - 1));
  }
  void on_call_end(const analysis::ReplayThread&, const analysis::ClosedCall& c) override {
    std::string s = "end f" + n(c.id) + " " + name(c.how) + " index=" + n(c.index) +
                    " dur=" + n(c.dur) + " self=" + n(c.self_ns);
    if (!c.outermost) s += " inner";
    if (c.kernel.offcpu_ns()) s += " offcpu=" + n(c.kernel.offcpu_ns());
    if (c.self_kernel.offcpu_ns()) s += " self_offcpu=" + n(c.self_kernel.offcpu_ns());
    if (c.kernel.syscall_ns) s += " sys=" + n(c.kernel.syscall_ns) + "/" + n(c.kernel.syscalls);
    if (c.self_kernel.syscall_ns) s += " self_sys=" + n(c.self_kernel.syscall_ns);
    add(s);
  }
  void on_interval_open(const analysis::ReplayThread&, const analysis::KernelInterval& i) override {
    add(std::string(i.kind == analysis::IntervalKind::Syscall ? "syscall" : "offcpu") +
        " open at=" + n(i.start));
  }
  void on_interval_close(const analysis::ReplayThread&, const analysis::KernelInterval& i,
                         const analysis::IntervalClose& c) override {
    add(std::string(i.kind == analysis::IntervalKind::Syscall ? "syscall" : "offcpu") + " " +
        name(c.how) + " at=" + n(c.ts));
  }
  void on_syscall(const analysis::ClosedSyscall& c) override {
    add("syscall nr=" + n(c.nr) + " ns=" + n(c.ns) + " key=" + n(c.key));
  }
  void on_event(const formats::Event& ev, const analysis::ReplayThread* t) override {
    add(std::string("event ") + formats::to_string(ev.kind) + (t ? "" : " (no thread)"));
  }

  std::vector<std::string> lines;

 private:
  static std::string n(uint64_t v) { return std::to_string(v); }
  void add(std::string s) { lines.push_back(std::move(s)); }
};

// The lines of a replay of `s`, finished at `end_ts`, without the
// on_event lines (checked on their own below).
std::vector<std::string> replay(const Seq& s, uint64_t end_ts = 0, analysis::ProbeCosts costs = {},
                                uint64_t* orphans = nullptr) {
  analysis::CallReplay r(probes());
  r.compensate(costs);
  Log log;
  r.listen(log);
  for (const auto& e : s.events) r.add(e);
  r.finish(end_ts);
  if (orphans) *orphans = r.orphan_exits();
  std::vector<std::string> out;
  for (auto& l : log.lines)
    if (l.rfind("event ", 0) != 0) out.push_back(std::move(l));
  return out;
}

using Lines = std::vector<std::string>;

}  // namespace

TEST(CallReplay, NestedCallsEndInnermostFirst) {
  Seq s;
  s.E(10, MAIN).E(20, A).X(30, A).E(40, B).X(45, B).X(100, MAIN);
  EXPECT_EQ(replay(s), (Lines{
                           "begin f1 tid=100 at=10 depth=0",
                           "begin f2 tid=100 at=20 depth=1",
                           "end f2 returned index=1 dur=10 self=10",
                           "begin f3 tid=100 at=40 depth=1",
                           "end f3 returned index=1 dur=5 self=5",
                           "end f1 returned index=0 dur=90 self=75",
                       }));
}

TEST(CallReplay, RecursionMarksTheInnerActivations) {
  Seq s;
  s.E(0, A).E(10, A).E(20, A).X(30, A).X(40, A).X(100, A);
  EXPECT_EQ(replay(s), (Lines{
                           "begin f2 tid=100 at=0 depth=0",
                           "begin f2 tid=100 at=10 depth=1",
                           "begin f2 tid=100 at=20 depth=2",
                           "end f2 returned index=2 dur=10 self=10 inner",
                           "end f2 returned index=1 dur=30 self=20 inner",
                           "end f2 returned index=0 dur=100 self=70",
                       }));
}

TEST(CallReplay, AnExitPopsTheCallsLeftAboveItsEntry) {
  // A longjmp from B to MAIN: A and B never return.
  Seq s;
  s.E(0, MAIN).E(10, A).E(20, B).X(50, MAIN);
  EXPECT_EQ(replay(s), (Lines{
                           "begin f1 tid=100 at=0 depth=0",
                           "begin f2 tid=100 at=10 depth=1",
                           "begin f3 tid=100 at=20 depth=2",
                           "end f3 abandoned index=2 dur=30 self=30",
                           "end f2 abandoned index=1 dur=40 self=10",
                           "end f1 returned index=0 dur=50 self=10",
                       }));
}

TEST(CallReplay, AnExceptionUnwindsTwoFramesAtTheCatch) {
  // B throws through A, caught in MAIN at 50: one Unwind event per frame.
  Seq s;
  s.E(0, MAIN).E(10, A).E(20, B).U(50, B).U(50, A).X(60, MAIN);
  EXPECT_EQ(replay(s), (Lines{
                           "begin f1 tid=100 at=0 depth=0",
                           "begin f2 tid=100 at=10 depth=1",
                           "begin f3 tid=100 at=20 depth=2",
                           "end f3 unwound index=2 dur=30 self=30",
                           "end f2 unwound index=1 dur=40 self=10",
                           "end f1 returned index=0 dur=60 self=20",
                       }));
}

TEST(CallReplay, AnUnwindBelowTheTopLeavesTheCallsAboveOpen) {
  Seq s;
  s.E(0, MAIN).E(10, A).U(20, MAIN).U(25, B);  // B: none open, nothing happens
  EXPECT_EQ(replay(s, 40), (Lines{
                               "begin f1 tid=100 at=0 depth=0",
                               "begin f2 tid=100 at=10 depth=1",
                               "end f1 unwound index=0 dur=20 self=20",
                               "end f2 trace-end index=0 dur=30 self=30",
                           }));
}

TEST(CallReplay, AnOrphanExitIsCountedAndChangesNothing) {
  Seq s;
  s.X(5, A).E(10, MAIN).X(15, B).X(20, MAIN);
  uint64_t orphans = 0;
  EXPECT_EQ(replay(s, 0, {}, &orphans), (Lines{
                                            "begin f1 tid=100 at=10 depth=0",
                                            "end f1 returned index=0 dur=10 self=10",
                                        }));
  EXPECT_EQ(orphans, 2u);
}

// Issue 18: A's entry at 40 was lost (the ring was full); its exit at 50
// must not pop the activation of A begun at 10, which would be an A -> A
// recursion that never happened and a 40 ns call of A. The A open at the
// gap ends at the thread's last event before the hole (B's exit at 30),
// not at the gap's time (the first event after it).
TEST(CallReplay, AGapClosesTheOpenCallsAndTheExitsAfterItAreOrphans) {
  Seq s;
  s.E(10, A).E(20, B).X(30, B).Gap(45, 1).X(50, A).E(60, B).X(70, B).X(80, A);
  analysis::CallReplay r(probes());
  Log log;
  r.listen(log);
  for (const auto& e : s.events) r.add(e);
  r.finish(0);
  Lines calls;
  for (auto& l : log.lines)
    if (l.rfind("event ", 0) != 0) calls.push_back(l);
  EXPECT_EQ(calls, (Lines{
                       "begin f2 tid=100 at=10 depth=0",
                       "begin f3 tid=100 at=20 depth=1",
                       "end f3 returned index=1 dur=10 self=10",
                       "end f2 gap index=0 dur=20 self=10",
                       "begin f3 tid=100 at=60 depth=0",
                       "end f3 returned index=0 dur=10 self=10",
                   }));
  // A's exits at 50 and 80: one entry was lost, the other is before the gap.
  EXPECT_EQ(r.orphan_exits(), 2u);
  const auto& t = r.threads().at(100);
  EXPECT_EQ(t.gaps, 1u);
  EXPECT_EQ(t.lost, 1u);
  EXPECT_TRUE(analysis::unfinished(CallEnd::Gap));
}

TEST(CallReplay, AGapOfOneThreadLeavesTheOthersAlone) {
  Seq s;
  s.E(10, A);
  s.tid = 200;
  s.E(20, A).Gap(30, 7).X(40, A);
  s.tid = 100;
  s.X(50, A);
  uint64_t orphans = 0;
  EXPECT_EQ(replay(s, 0, {}, &orphans), (Lines{
                                            "begin f2 tid=100 at=10 depth=0",
                                            "begin f2 tid=200 at=20 depth=0",
                                            "end f2 gap index=0 dur=0 self=0",
                                            "end f2 returned index=0 dur=40 self=40",
                                        }));
  EXPECT_EQ(orphans, 1u);
}

TEST(CallReplay, UnfinishedCallsCloseAtTheEndOrAtTheirThreadsExit) {
  Seq s;
  s.E(10, MAIN).E(20, A);
  s.tid = 200;
  s.E(30, B).push(60, EventKind::ThreadExit);
  EXPECT_EQ(replay(s, 100), (Lines{
                                "begin f1 tid=100 at=10 depth=0",
                                "begin f2 tid=100 at=20 depth=1",
                                "begin f3 tid=200 at=30 depth=0",
                                "end f3 thread-exit index=0 dur=30 self=30",
                                "end f2 trace-end index=1 dur=80 self=80",
                                "end f1 trace-end index=0 dur=90 self=10",
                            }));
  // An end before the last event (0: unknown) means the last event's time.
  Seq t;
  t.E(10, MAIN).E(70, A);
  EXPECT_EQ(replay(t, 0).back(), "end f1 trace-end index=0 dur=60 self=60");
}

// Issue 32: a child forked inside A (called from MAIN) returns from A:
// a call of the child from A's entry, inside its copy of MAIN; its own B,
// open at that return, was left. MAIN, never returned from in the child,
// is a call of the child too (it was open around A), closed at its exit.
// A second child that execs has its copies ended without a call.
TEST(CallReplay, AForkedChildReturnsFromItsCopyOfItsParentsCalls) {
  Seq s;
  s.E(10, MAIN).E(20, A).push(30, EventKind::ProcFork, 0, 101, 201);
  s.push(31, EventKind::ProcFork, 0, 102, 202);
  s.tid = 201;
  s.E(40, B).X(50, A).push(60, EventKind::ThreadExit);
  s.tid = 202;
  s.push(45, EventKind::ProcExec).E(55, B).X(65, B);
  s.tid = 100;
  s.X(70, A).X(80, MAIN);
  uint64_t orphans = 0;
  EXPECT_EQ(replay(s, 0, {}, &orphans), (Lines{
                                            "begin f1 tid=100 at=10 depth=0",
                                            "begin f2 tid=100 at=20 depth=1",
                                            "begin f3 tid=201 at=40 depth=0",
                                            "end f3 abandoned index=0 dur=10 self=10",
                                            "begin f1 tid=201 at=10 depth=0",
                                            "begin f2 tid=201 at=20 depth=1",
                                            "end f2 returned index=1 dur=30 self=30",
                                            "end f1 thread-exit index=0 dur=50 self=20",
                                            "begin f3 tid=202 at=55 depth=0",
                                            "end f3 returned index=0 dur=10 self=10",
                                            "end f2 returned index=1 dur=50 self=50",
                                            "end f1 returned index=0 dur=70 self=20",
                                        }));
  EXPECT_EQ(orphans, 0u);
}

// A thread's open calls end at its process's exec (the old program is
// gone): unfinished, no return made up; the new program's exit of a
// function of the same id is an orphan, not their return.
TEST(CallReplay, AnExecEndsTheOldProgramsCalls) {
  Seq s;
  s.E(10, MAIN).E(20, A).push(30, EventKind::ProcExec).X(40, A);
  uint64_t orphans = 0;
  EXPECT_EQ(replay(s, 0, {}, &orphans), (Lines{
                                            "begin f1 tid=100 at=10 depth=0",
                                            "begin f2 tid=100 at=20 depth=1",
                                            "end f2 exec index=1 dur=10 self=10",
                                            "end f1 exec index=0 dur=20 self=10",
                                        }));
  EXPECT_EQ(orphans, 1u);
  EXPECT_TRUE(analysis::unfinished(CallEnd::Exec));
}

TEST(CallReplay, AKernelSleepInsideACallIsItsOffCpuTime) {
  // A sleeps in nanosleep (35) from 20 to 50, switched out 25..45, inside
  // MAIN: A's own kernel time, MAIN's only inclusively.
  Seq s;
  s.E(0, MAIN).E(10, A);
  s.push(20, EventKind::SyscallEnter, 0, 35);
  s.push(25, EventKind::SchedSwitchOut, 0, 0, 0, 1);
  s.push(45, EventKind::SchedSwitchIn);
  s.push(50, EventKind::SyscallExit, 0, 35, 0);
  s.X(60, A).X(70, MAIN);
  EXPECT_EQ(replay(s), (Lines{
                           "begin f1 tid=100 at=0 depth=0",
                           "begin f2 tid=100 at=10 depth=1",
                           "syscall open at=20",
                           "offcpu open at=25",
                           "offcpu closed at=45",
                           "syscall closed at=50",
                           "syscall nr=35 ns=30 key=2",
                           "end f2 returned index=1 dur=50 self=50 offcpu=20 self_offcpu=20 "
                           "sys=30/1 self_sys=30",
                           "end f1 returned index=0 dur=70 self=20 offcpu=20 sys=30/1",
                       }));
}

TEST(CallReplay, AKernelIntervalThatLostItsEndClosesAtTheNextCall) {
  // The switch-in was lost: the thread ran again at A's exit.
  Seq s;
  s.E(0, A).push(10, EventKind::SchedSwitchOut, 0, 0, 0, 0).X(30, A);
  EXPECT_EQ(replay(s), (Lines{
                           "begin f2 tid=100 at=0 depth=0",
                           "offcpu open at=10",
                           "offcpu repaired at=30",
                           "end f2 returned index=0 dur=30 self=30 offcpu=20 self_offcpu=20",
                       }));
}

TEST(CallReplay, CompensationTakesOutTheProbesOfNestedCalls) {
  // Emulated probes: a whole call costs 100 ns, 40 of it inside its own
  // interval. A (1000 ns) loses 40; MAIN (2000 ns) loses its own 40 and A's
  // 100.
  analysis::ProbeCosts costs;
  costs.emulated = 100;
  costs.inside_emulated = 40;
  Seq s;
  s.E(0, MAIN).E(500, A).X(1500, A).X(2000, MAIN);
  EXPECT_EQ(replay(s, 0, costs), (Lines{
                                     "begin f1 tid=100 at=0 depth=0",
                                     "begin f2 tid=100 at=500 depth=1",
                                     "end f2 returned index=1 dur=960 self=960",
                                     "end f1 returned index=0 dur=1860 self=900",
                                 }));
}

TEST(CallReplay, EveryEventReachesListenersAfterItsCalls) {
  Seq s;
  s.E(10, A).push(12, EventKind::Usdt, 3).X(20, A);
  formats::Event detach;
  detach.ts = 15;
  detach.kind = EventKind::Detach;
  detach.id = B;
  s.events.insert(s.events.begin() + 1, detach);
  analysis::CallReplay r(probes());
  Log log;
  r.listen(log);
  for (const auto& e : s.events) r.add(e);
  r.finish(0);
  EXPECT_EQ(log.lines,
            (Lines{
                "begin f2 tid=100 at=10 depth=0",
                std::string("event ") + formats::to_string(EventKind::FuncEntry),
                std::string("event ") + formats::to_string(EventKind::Detach) + " (no thread)",
                std::string("event ") + formats::to_string(EventKind::Usdt),
                "end f2 returned index=0 dur=10 self=10",
                std::string("event ") + formats::to_string(EventKind::FuncExit),
            }));
  ASSERT_EQ(r.threads().size(), 1u);  // DETACH (tid 0) makes no thread
  EXPECT_EQ(r.threads().at(100).events, 3u);
  EXPECT_EQ(r.end_ts(), 20u);
}

// Calls past the kernel's nesting limit: the recorder says, before the exit
// that showed it, which calls had no return probe; they are counted with
// no duration, their callees' time goes to the timed caller's callees, and
// the exit that fires is paired with its own entry, not the innermost one.
TEST(CallReplay, CallsPastTheNestingLimitEndUntimedAndTheExitFindsItsEntry) {
  Seq s;
  // A (timed, entered at 0) recurses: A at 10 and 20 got no return probe.
  s.E(0, A).E(10, A).E(20, A).NoRet(49, A, 20).NoRet(49, A, 10).X(50, A);
  EXPECT_EQ(replay(s), (Lines{
                           "begin f2 tid=100 at=0 depth=0",
                           "begin f2 tid=100 at=10 depth=1",
                           "begin f2 tid=100 at=20 depth=2",
                           "end f2 untimed index=2 dur=0 self=0 inner",
                           "end f2 untimed index=1 dur=0 self=0 inner",
                           "end f2 returned index=0 dur=50 self=50",
                       }));
}

TEST(CallReplay, UntimedCallsPassTheirCalleesTimeToTheirCaller) {
  Seq s;
  // MAIN -> A (no return probe) -> B (timed, 10 ns).
  s.E(0, MAIN).E(10, A).E(20, B).X(30, B).NoRet(39, A, 10).X(40, MAIN);
  EXPECT_EQ(replay(s), (Lines{
                           "begin f1 tid=100 at=0 depth=0",
                           "begin f2 tid=100 at=10 depth=1",
                           "begin f3 tid=100 at=20 depth=2",
                           "end f3 returned index=2 dur=10 self=10",
                           "end f2 untimed index=1 dur=0 self=0",
                           "end f1 returned index=0 dur=40 self=30",
                       }));
}

TEST(CallReplay, AnUnwindNamesItsCallByItsEntryTime) {
  Seq s;
  // A recursion: the outer A (at 0) is left by longjmp, the inner (at 10)
  // was already closed by an exception's Unwind: the recorder's word for
  // it finds no open call and does nothing; the one for the outer closes
  // exactly it.
  s.E(0, A).E(10, A).U(20, A).Left(29, A, 10).Left(30, A, 0).E(30, B).X(35, B);
  EXPECT_EQ(replay(s), (Lines{
                           "begin f2 tid=100 at=0 depth=0",
                           "begin f2 tid=100 at=10 depth=1",
                           "end f2 unwound index=1 dur=10 self=10 inner",
                           "end f2 abandoned index=0 dur=30 self=20",
                           "begin f3 tid=100 at=30 depth=0",
                           "end f3 returned index=0 dur=5 self=5",
                       }));
}

// siglongjmp out of two calls: closed where the thread was seen below
// them (the next entry), abandoned, with their time up to there.
TEST(CallReplay, CallsLeftByLongjmpEndAbandonedWhereTheThreadIsSeenBelow) {
  Seq s;
  s.E(0, A).E(10, B).Left(99, B, 10).Left(99, A, 0).E(100, MAIN).X(110, MAIN);
  EXPECT_EQ(replay(s, 1000), (Lines{
                                 "begin f2 tid=100 at=0 depth=0",
                                 "begin f3 tid=100 at=10 depth=1",
                                 "end f3 abandoned index=1 dur=89 self=89",
                                 "end f2 abandoned index=0 dur=99 self=10",
                                 "begin f1 tid=100 at=100 depth=0",
                                 "end f1 returned index=0 dur=10 self=10",
                             }));
}

// An untimed call still open when its thread ends is not unfinished.
TEST(CallReplay, AnUntimedCallIsNeverUnfinished) {
  EXPECT_FALSE(analysis::unfinished(CallEnd::Untimed));
  EXPECT_FALSE(analysis::timed(CallEnd::Untimed));
  EXPECT_TRUE(analysis::timed(CallEnd::Abandoned));
  formats::Event ev;
  ev.kind = EventKind::Unwind;
  ev.flags = static_cast<uint8_t>(formats::UnwindHow::NestingLimit);
  EXPECT_EQ(analysis::untimed_reason(ev), analysis::UntimedReason::NestingLimit);
  ev.flags = static_cast<uint8_t>(formats::UnwindHow::Abandoned);
  EXPECT_EQ(analysis::untimed_reason(ev), analysis::UntimedReason::None);
}
