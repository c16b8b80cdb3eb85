// Kernel-event attribution on hand-made event sequences whose exact numbers
// are known: off-CPU time (blocked, runnable), system calls, page faults, per
// function (inclusive and self) and per thread; the --syscalls table; the
// kernel columns and fields of the text and JSON reports.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "analysis/profile.h"
#include "output/report.h"

using namespace atrace;
using formats::EventKind;

namespace {

enum { MAIN = 1, A = 2, B = 3 };
constexpr uint64_t kRead = 0, kNanosleep = 35, kGetppid = 110, kExitGroup = 231;
constexpr uint8_t kBlocked = 1, kDead = 0x80;

std::vector<formats::ProbeInfo> probes() {
  std::vector<formats::ProbeInfo> out;
  const char* names[] = {"", "main", "a", "b"};
  for (uint32_t id = 1; id <= 3; id++) {
    formats::ProbeInfo p;
    p.id = id;
    p.name = names[id];
    p.module = id == B ? "libx.so" : "demo";
    out.push_back(p);
  }
  return out;
}

// Event sequences of one or more threads, in time order.
struct Seq {
  uint32_t tid = 100;
  std::vector<formats::Event> events;
  Seq& on(uint32_t t) {
    tid = t;
    return *this;
  }
  Seq& E(uint64_t ts, uint32_t id) { return push(ts, EventKind::FuncEntry).id(id); }
  Seq& X(uint64_t ts, uint32_t id) { return push(ts, EventKind::FuncExit).id(id); }
  Seq& T(uint64_t ts) { return push(ts, EventKind::ThreadExit); }
  Seq& Out(uint64_t ts, uint8_t state) {
    push(ts, EventKind::SchedSwitchOut).events.back().flags = state;
    return *this;
  }
  Seq& In(uint64_t ts) { return push(ts, EventKind::SchedSwitchIn); }
  Seq& SysE(uint64_t ts, uint64_t nr) {
    push(ts, EventKind::SyscallEnter).events.back().arg0 = nr;
    return *this;
  }
  Seq& SysX(uint64_t ts, uint64_t nr, int64_t ret) {
    push(ts, EventKind::SyscallExit);
    events.back().arg0 = nr;
    events.back().arg1 = static_cast<uint64_t>(ret);
    return *this;
  }
  Seq& Fault(uint64_t ts) {
    push(ts, EventKind::PageFault).events.back().flags = formats::kFaultUser;
    return *this;
  }
  Seq& K(uint64_t ts, EventKind k) { return push(ts, k); }
  Seq& Comm(uint64_t ts, const std::string& name) {
    push(ts, EventKind::Comm).events.back().text = name;
    return *this;
  }

  Seq& push(uint64_t ts, EventKind k) {
    formats::Event e;
    e.ts = ts;
    e.pid = 100;
    e.tid = tid;
    e.kind = k;
    events.push_back(e);
    return *this;
  }
  Seq& id(uint32_t id) {
    events.back().id = id;
    return *this;
  }
};

analysis::Profile build(const Seq& s, uint64_t end_ts,
                        const std::vector<formats::ThreadInfo>& threads = {}) {
  analysis::ProfileBuilder b(probes());
  b.per_thread_rows(true);
  for (const auto& e : s.events) b.add(e);
  return b.finish(end_ts, threads, {});
}

const analysis::FunctionStats& fn(const analysis::Profile& p, const std::string& name) {
  for (const auto& f : p.functions)
    if (f.name == name) return f;
  static analysis::FunctionStats none;
  ADD_FAILURE() << "no function " << name;
  return none;
}

const analysis::ThreadSummary& thread(const analysis::Profile& p, uint32_t tid) {
  for (const auto& t : p.threads)
    if (t.tid == tid) return t;
  static analysis::ThreadSummary none;
  ADD_FAILURE() << "no thread " << tid;
  return none;
}

analysis::KernelTimes K(uint64_t blocked, uint64_t runnable, uint64_t sys_ns, uint64_t syscalls,
                        uint64_t faults) {
  return {blocked, runnable, sys_ns, syscalls, faults};
}

}  // namespace

namespace atrace::analysis {
// For readable failures of EXPECT_EQ on KernelTimes (found by ADL).
void PrintTo(const KernelTimes& k, std::ostream* os) {
  *os << "{blocked " << k.offcpu_blocked_ns << ", runnable " << k.offcpu_runnable_ns << ", sys "
      << k.syscall_ns << " ns, " << k.syscalls << " syscalls, " << k.faults << " faults}";
}
}  // namespace atrace::analysis

TEST(ProfileKernel, SleepIsBlockedOffCpuOfTheSleeperAndItsCallersInclusive) {
  // main [0,1000] calls a [100,900], which sleeps in nanosleep [200,800]:
  // switched out blocked at 250, back at 750.
  Seq s;
  s.E(0, MAIN).E(100, A).SysE(200, kNanosleep).Out(250, kBlocked).In(750);
  s.SysX(800, kNanosleep, 0).X(900, A).X(1000, MAIN);
  auto p = build(s, 1000);

  auto& a = fn(p, "a");
  EXPECT_EQ(a.kernel, K(500, 0, 600, 1, 0));
  EXPECT_EQ(a.self_kernel, K(500, 0, 600, 1, 0));
  EXPECT_EQ(a.kernel.offcpu_ns(), 500u);
  auto& m = fn(p, "main");
  EXPECT_EQ(m.kernel, K(500, 0, 600, 1, 0));
  EXPECT_EQ(m.self_kernel, K(0, 0, 0, 0, 0));
  // Wall-clock times are unchanged by kernel events.
  EXPECT_EQ(a.total_ns, 800u);
  EXPECT_EQ(m.self_ns, 200u);

  auto& t = thread(p, 100);
  EXPECT_EQ(t.kernel, K(500, 0, 600, 1, 0));
  EXPECT_EQ(t.oncpu_ns, 1000u - 500u);
}

TEST(ProfileKernel, PreemptedTimeIsRunnable) {
  // a [0,100] preempted at 30, back at 70; b [120,200] blocked [130,150].
  Seq s;
  s.E(0, A).Out(30, formats::kSwitchRunnable).In(70).X(100, A);
  s.E(120, B).Out(130, kBlocked).In(150).X(200, B);
  auto p = build(s, 200);
  EXPECT_EQ(fn(p, "a").kernel, K(0, 40, 0, 0, 0));
  EXPECT_EQ(fn(p, "a").self_kernel, K(0, 40, 0, 0, 0));
  EXPECT_EQ(fn(p, "b").kernel, K(20, 0, 0, 0, 0));
  auto& t = thread(p, 100);
  EXPECT_EQ(t.kernel.offcpu_ns(), 60u);
  EXPECT_EQ(t.oncpu_ns, 140u);
}

TEST(ProfileKernel, SyscallsOfACalleeAreItsSelfAndTheCallersInclusiveOnly) {
  // main calls a, which makes exactly 1000 getppid() of 10 ns each.
  Seq s;
  s.E(0, MAIN).E(10, A);
  uint64_t ts = 20;
  for (int i = 0; i < 1000; i++, ts += 20) s.SysE(ts, kGetppid).SysX(ts + 10, kGetppid, 100);
  s.X(ts, A).X(ts + 10, MAIN);
  auto p = build(s, ts + 10);

  auto& a = fn(p, "a");
  EXPECT_EQ(a.kernel, K(0, 0, 10'000, 1000, 0));
  EXPECT_EQ(a.self_kernel, K(0, 0, 10'000, 1000, 0));
  auto& m = fn(p, "main");
  EXPECT_EQ(m.kernel, K(0, 0, 10'000, 1000, 0));
  EXPECT_EQ(m.self_kernel.syscalls, 0u);
  EXPECT_EQ(m.self_kernel.syscall_ns, 0u);

  ASSERT_EQ(p.syscalls.size(), 1u);
  const auto& r = p.syscalls[0];
  EXPECT_EQ(r.function, "a");
  EXPECT_EQ(r.module, "demo");
  EXPECT_EQ(r.name, "getppid");
  EXPECT_EQ(r.nr, kGetppid);
  EXPECT_EQ(r.count, 1000u);
  EXPECT_EQ(r.total_ns, 10'000u);
  EXPECT_EQ(r.avg_ns(), 10u);
  EXPECT_EQ(r.max_ns, 10u);
  EXPECT_EQ(r.errors, 0u);
}

TEST(ProfileKernel, FaultsGoToTheInnermostFunctionAndItsCallers) {
  // main takes 2 faults itself, b (called by main) 3.
  Seq s;
  s.E(0, MAIN).Fault(5).E(10, B).Fault(11).Fault(12).Fault(13).X(20, B).Fault(25).X(30, MAIN);
  s.Fault(40);  // outside any traced function: the thread's only
  auto p = build(s, 50);
  EXPECT_EQ(fn(p, "b").kernel.faults, 3u);
  EXPECT_EQ(fn(p, "b").self_kernel.faults, 3u);
  EXPECT_EQ(fn(p, "main").kernel.faults, 5u);
  EXPECT_EQ(fn(p, "main").self_kernel.faults, 2u);
  EXPECT_EQ(thread(p, 100).kernel.faults, 6u);
}

TEST(ProfileKernel, RecursionCountsTheOutermostActivationOnly) {
  // a [0,100] -> a [10,80] -> a [20,50]. The innermost a is blocked
  // [30,40] inside a read [25,45]; the outermost is preempted [90,95].
  Seq s;
  s.E(0, A).E(10, A).E(20, A).SysE(25, kRead).Out(30, kBlocked).In(40).SysX(45, kRead, 8);
  s.X(50, A).X(80, A).Out(90, 0).In(95).X(100, A);
  auto p = build(s, 100);
  auto& a = fn(p, "a");
  EXPECT_EQ(a.calls, 3u);
  // Inclusive: what happened inside the outermost call, once.
  EXPECT_EQ(a.kernel, K(10, 5, 20, 1, 0));
  // Self: inner 10 blocked + read; middle nothing; outer 5 runnable.
  EXPECT_EQ(a.self_kernel, K(10, 5, 20, 1, 0));
  EXPECT_EQ(thread(p, 100).kernel, K(10, 5, 20, 1, 0));
}

TEST(ProfileKernel, IndirectRecursionSelfAndInclusive) {
  // a [0,100] -> b [10,90] -> a [20,50]; a fault in each frame.
  Seq s;
  s.E(0, A).Fault(5).E(10, B).Fault(15).E(20, A).Fault(30).X(50, A).X(90, B).X(100, A);
  auto p = build(s, 100);
  EXPECT_EQ(fn(p, "a").kernel.faults, 3u);
  EXPECT_EQ(fn(p, "a").self_kernel.faults, 2u);
  EXPECT_EQ(fn(p, "b").kernel.faults, 2u);
  EXPECT_EQ(fn(p, "b").self_kernel.faults, 1u);
}

TEST(ProfileKernel, OpenSyscallIsClosedAtThreadExit) {
  // a calls exit_group at 50; the thread exits at 80 (ThreadExit, then
  // ProcExit at the same time), and its final switch out (TASK_DEAD) must
  // not count as off-CPU time until the end of the recording.
  Seq s;
  s.E(0, A).SysE(50, kExitGroup).T(80).K(80, EventKind::ProcExit).Out(85, kDead);
  auto p = build(s, 1000);
  auto& a = fn(p, "a");
  EXPECT_EQ(a.unfinished, 1u);
  EXPECT_EQ(a.total_ns, 80u);
  EXPECT_EQ(a.kernel, K(0, 0, 30, 1, 0));
  EXPECT_EQ(a.self_kernel, K(0, 0, 30, 1, 0));
  auto& t = thread(p, 100);
  EXPECT_EQ(t.kernel, K(0, 0, 30, 1, 0));
  EXPECT_EQ(t.oncpu_ns, 80u);  // span: first event to its exit
  ASSERT_EQ(p.syscalls.size(), 1u);
  EXPECT_EQ(p.syscalls[0].name, "exit_group");
  EXPECT_EQ(p.syscalls[0].total_ns, 30u);
  EXPECT_EQ(p.syscalls[0].errors, 0u);
}

TEST(ProfileKernel, ProcExitAloneClosesTheOpenSyscall) {
  Seq s;
  s.E(0, A).SysE(10, kExitGroup).K(40, EventKind::ProcExit);
  auto p = build(s, 100);
  EXPECT_EQ(fn(p, "a").kernel.syscall_ns, 30u);
  EXPECT_EQ(thread(p, 100).oncpu_ns, 40u);
}

TEST(ProfileKernel, OpenIntervalsAreClosedAtTheEndOfTheRecording) {
  // a blocks at 50 inside a read and is still asleep when recording stops.
  Seq s;
  s.E(0, A).SysE(40, kRead).Out(50, kBlocked);
  auto p = build(s, 200);
  auto& a = fn(p, "a");
  EXPECT_EQ(a.unfinished, 1u);
  EXPECT_EQ(a.kernel, K(150, 0, 160, 1, 0));
  EXPECT_EQ(thread(p, 100).oncpu_ns, 50u);
  ASSERT_EQ(p.syscalls.size(), 1u);
  EXPECT_EQ(p.syscalls[0].total_ns, 160u);
}

TEST(ProfileKernel, UnmatchedSwitchInAndSyscallExitAreIgnored) {
  // Recording began while the thread was switched out, inside a read.
  Seq s;
  s.In(10).SysX(15, kRead, 4).E(20, A).X(60, A);
  auto p = build(s, 100);
  EXPECT_EQ(fn(p, "a").kernel, K(0, 0, 0, 0, 0));
  auto& t = thread(p, 100);
  EXPECT_EQ(t.kernel, K(0, 0, 0, 0, 0));
  EXPECT_EQ(t.oncpu_ns, 90u);  // from its first event (10) to the end
  EXPECT_TRUE(p.syscalls.empty());
}

TEST(ProfileKernel, LostClosingEventsEndAtTheNextSignOfRunning) {
  // The SwitchIn after 10 was lost: a's entry at 30 shows the thread ran.
  // The exit of the read at 40 was lost: a's exit at 70 ends it (no uprobe
  // fires inside a system call).
  Seq s;
  s.Out(10, kBlocked).E(30, A).SysE(40, kRead).X(70, A);
  auto p = build(s, 100);
  EXPECT_EQ(thread(p, 100).kernel, K(20, 0, 30, 1, 0));
  EXPECT_EQ(fn(p, "a").kernel, K(0, 0, 30, 1, 0));
}

TEST(ProfileKernel, TheProbesOwnSystemCallsAreNotCounted) {
  // Linux 6.11+ runs a return probe inside the uretprobe system call (335),
  // 6.17+ an optimized entry probe inside uprobe (336); both exit numbered
  // -1. Only a's getppid counts; rt_sigreturn's -1 exit is no error.
  constexpr uint64_t kUretprobe = 335, kUprobe = 336, kRtSigreturn = 15;
  const uint64_t minus_one = ~0ull;
  Seq s;
  s.SysE(0, kUprobe).E(1, A).SysX(2, minus_one, 0);
  s.SysE(10, kGetppid).SysX(20, kGetppid, 100);
  s.SysE(30, kRtSigreturn).SysX(35, minus_one, -4);
  s.SysE(40, kUretprobe).X(41, A).SysX(42, minus_one, 0);
  auto p = build(s, 50);
  EXPECT_EQ(fn(p, "a").kernel, K(0, 0, 15, 2, 0));
  EXPECT_EQ(fn(p, "a").total_ns, 40u);
  EXPECT_EQ(thread(p, 100).kernel, K(0, 0, 15, 2, 0));
  ASSERT_EQ(p.syscalls.size(), 2u);
  EXPECT_EQ(p.syscalls[0].name, "getppid");
  EXPECT_EQ(p.syscalls[1].name, "rt_sigreturn");
  EXPECT_EQ(p.syscalls[1].errors, 0u);
}

TEST(ProfileKernel, WakeupsMigrationsForksAndExecsAreNotAttributed) {
  Seq s;
  s.E(0, A).K(10, EventKind::SchedWakeup).K(20, EventKind::SchedMigrate);
  s.K(30, EventKind::ProcFork).K(40, EventKind::ProcExec).X(50, A);
  auto p = build(s, 50);
  EXPECT_EQ(fn(p, "a").kernel, K(0, 0, 0, 0, 0));
  EXPECT_EQ(thread(p, 100).oncpu_ns, 50u);
  EXPECT_EQ(thread(p, 100).events, 6u);
}

TEST(ProfileKernel, PerThreadNumbersAndComm) {
  // Thread 1 sleeps 300 of its 1000; thread 2 starts at 500, is preempted
  // for 100 and exits at 900. Thread 2 is not in the file's table: its
  // name comes from its Comm event.
  Seq s;
  s.on(1).E(0, MAIN).Out(100, kBlocked);
  s.on(1).In(400);
  s.on(2).Comm(500, "worker").E(510, A).Out(600, 0);
  s.on(2).In(700).X(800, A).T(900);
  s.on(1).X(1000, MAIN);
  auto p = build(s, 1000, {{1, 100, "main", 0, 0, 3}});
  auto& t1 = thread(p, 1);
  EXPECT_EQ(t1.name, "main");
  EXPECT_EQ(t1.kernel, K(300, 0, 0, 0, 0));
  EXPECT_EQ(t1.oncpu_ns, 700u);
  auto& t2 = thread(p, 2);
  EXPECT_EQ(t2.name, "worker");
  EXPECT_EQ(t2.kernel, K(0, 100, 0, 0, 0));
  EXPECT_EQ(t2.oncpu_ns, 300u);

  // Per-thread function rows carry their thread's numbers.
  ASSERT_EQ(p.per_thread.size(), 2u);
  EXPECT_EQ(p.per_thread[0].name, "main");
  EXPECT_EQ(p.per_thread[0].kernel, K(300, 0, 0, 0, 0));
  EXPECT_EQ(p.per_thread[1].name, "a");
  EXPECT_EQ(p.per_thread[1].kernel, K(0, 100, 0, 0, 0));
}

TEST(ProfileKernel, SyscallTableByFunctionWithErrors) {
  // a: 2 reads failing with EAGAIN (-11) and one of 100 bytes; -4096 is not
  // an errno. main: a nanosleep of 500. Before main: a getppid.
  Seq s;
  s.SysE(0, kGetppid).SysX(5, kGetppid, 1);
  s.E(10, MAIN).E(20, A);
  s.SysE(30, kRead).SysX(40, kRead, -11);
  s.SysE(50, kRead).SysX(80, kRead, -4095);
  s.SysE(90, kRead).SysX(95, kRead, -4096);
  s.SysE(100, kRead).SysX(120, kRead, 100);
  s.X(130, A).SysE(140, kNanosleep).SysX(640, kNanosleep, 0).X(700, MAIN);
  auto p = build(s, 700);

  ASSERT_EQ(p.syscalls.size(), 3u);
  EXPECT_EQ(p.syscalls[0].function, "main");
  EXPECT_EQ(p.syscalls[0].name, "nanosleep");
  EXPECT_EQ(p.syscalls[0].total_ns, 500u);
  const auto& r = p.syscalls[1];
  EXPECT_EQ(r.function, "a");
  EXPECT_EQ(r.name, "read");
  EXPECT_EQ(r.count, 4u);
  EXPECT_EQ(r.total_ns, 10u + 30u + 5u + 20u);
  EXPECT_EQ(r.avg_ns(), 16u);
  EXPECT_EQ(r.max_ns, 30u);
  EXPECT_EQ(r.errors, 2u);
  EXPECT_EQ(p.syscalls[2].function, analysis::kNoFunction);
  EXPECT_EQ(p.syscalls[2].module, "");
  EXPECT_EQ(p.syscalls[2].name, "getppid");
  EXPECT_EQ(p.syscalls[2].count, 1u);

  EXPECT_EQ(fn(p, "main").kernel, K(0, 0, 565, 5, 0));
  EXPECT_EQ(fn(p, "main").self_kernel, K(0, 0, 500, 1, 0));
  EXPECT_EQ(thread(p, 100).kernel.syscalls, 6u);
}

TEST(ProfileKernel, UnknownSyscallNumbersAreCountedByNumber) {
  // Numbers beyond the dense index (a damaged file) still get their rows.
  Seq s;
  s.E(0, A).SysE(10, 5000).SysX(20, 5000, 0).SysE(30, 5000).SysX(35, 5000, 0);
  s.SysE(40, 7).SysX(41, 7, 0).X(50, A);
  auto p = build(s, 50);
  ASSERT_EQ(p.syscalls.size(), 2u);
  EXPECT_EQ(p.syscalls[0].nr, 5000u);
  EXPECT_EQ(p.syscalls[0].count, 2u);
  EXPECT_EQ(p.syscalls[0].name, "syscall_5000");
  EXPECT_EQ(p.syscalls[1].nr, 7u);
}

TEST(ProfileKernel, SortByKernelNumbers) {
  // a: blocked 50, 1 syscall of 60; b: preempted 10, 3 syscalls of 3; main:
  // 4 faults.
  Seq s;
  s.E(0, MAIN).Fault(1).Fault(2).Fault(3).Fault(4);
  s.E(10, A).SysE(20, kRead).Out(30, kBlocked).In(80).SysX(80, kRead, 0).X(90, A);
  s.E(100, B).Out(105, 0).In(115).SysE(120, kRead).SysX(121, kRead, 0);
  s.SysE(130, kRead).SysX(131, kRead, 0).SysE(140, kRead).SysX(141, kRead, 0).X(150, B);
  s.X(160, MAIN);
  auto p = build(s, 160);
  auto order = [&](const char* key) {
    auto rows = p.functions;
    analysis::sort_functions(rows, *analysis::parse_sort_key(key));
    std::string names;
    for (const auto& f : rows) names += f.name + " ";
    return names;
  };
  EXPECT_EQ(order("offcpu"), "main a b ");    // 60, 50, 10
  EXPECT_EQ(order("systime"), "main a b ");   // 63, 60, 3
  EXPECT_EQ(order("syscalls"), "main b a ");  // 4, 3, 1
  EXPECT_EQ(order("faults"), "main a b ");    // 4, then ties by name
  EXPECT_FALSE(analysis::parse_sort_key("sys").has_value());
}

// ---- Reports --------------------------------------------------------------

namespace {

formats::TraceHeader header(const std::string& kernel_events) {
  formats::TraceHeader h;
  h.atrace_version = "0.1.0";
  h.target_command = "./demo";
  h.target_pid = 100;
  h.start_mono_ns = 0;
  h.end_mono_ns = 1000;
  h.kernel_events = kernel_events;
  return h;
}

// The sleep of the first test, a few faults and a failing read in b.
analysis::Profile sample() {
  Seq s;
  s.E(0, MAIN).E(100, A).SysE(200, kNanosleep).Out(250, kBlocked).In(750);
  s.SysX(800, kNanosleep, 0).X(900, A).Fault(910).E(920, B).Fault(925);
  s.SysE(930, kRead).SysX(940, kRead, -9).X(950, B).X(1000, MAIN);
  return build(s, 1000, {{100, 100, "demo", 0, 0, 15}});
}

struct Rendered {
  analysis::Profile p = sample();
  formats::TraceHeader h;
  std::vector<std::string> warnings;
  explicit Rendered(const std::string& kernel_events) : h(header(kernel_events)) {}
  std::string text(analysis::ReportOptions opt = {}) { return render_text({h, p, warnings}, opt); }
  nlohmann::json json(analysis::ReportOptions opt = {}) {
    return nlohmann::json::parse(render_json({h, p, warnings}, opt));
  }
};

}  // namespace

TEST(ProfileKernelReport, TextShowsKernelColumnsOnlyWithKernelEvents) {
  Rendered with("sched,syscalls,faults,proc");
  std::string text = with.text();
  // The times (Min included), then one inclusive column per recorded
  // group's measure; the self ones on request (--fields). a: 500 ns
  // off-CPU inclusive and self, 600 ns in 1 system call; main: the same
  // inclusive only, 2 faults.
  EXPECT_NE(text.find("\nCalls    Total    Self      Avg      Min      Max  Off-CPU  Sys time  "
                      "Syscalls  Faults  Function\n"
                      "    1  1.00 us  170 ns  1.00 us  1.00 us  1.00 us   500 ns    610 ns"
                      "         2       2  main\n"
                      "    1   800 ns  800 ns   800 ns   800 ns   800 ns   500 ns    600 ns"
                      "         1       0  a\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Off-CPU: time switched out"), std::string::npos) << text;
  analysis::ReportOptions fields;
  fields.fields = {analysis::Field::Calls, analysis::Field::Offcpu, analysis::Field::SelfOffcpu,
                   analysis::Field::SysTime, analysis::Field::SelfSysTime};
  text = with.text(fields);
  EXPECT_NE(text.find("\nCalls  Off-CPU  Self off  Sys time  Self sys  Function\n"
                      "    1   500 ns      0 ns    610 ns      0 ns  main\n"
                      "    1   500 ns    500 ns    600 ns    600 ns  a\n"),
            std::string::npos)
      << text;

  Rendered without("");
  text = without.text();
  for (const char* col : {"Off-CPU", "Self off", "Sys time", "Syscalls", "Faults"})
    EXPECT_EQ(text.find(col), std::string::npos) << col << "\n" << text;
  // The table of a trace without kernel events, exactly as before them.
  EXPECT_NE(text.find("Calls    Total    Self      Avg      Min      Max  Function\n"),
            std::string::npos)
      << text;
}

// Kernel events without system calls (record's default when functions are
// probed): no system call columns rather than columns of zeros.
TEST(ProfileKernelReport, TextLeavesSyscallColumnsOutWhenNotRecorded) {
  Rendered r("sched,faults,proc");
  r.p.syscalls.clear();
  std::string text = r.text();
  for (const char* col : {"Off-CPU", "Min", "Faults"})
    EXPECT_NE(text.find(col), std::string::npos) << col << "\n" << text;
  for (const char* col : {"Sys time", "Self sys", "Syscalls"})
    EXPECT_EQ(text.find(col), std::string::npos) << col << "\n" << text;
  // Asked for anyway: "-", not a 0 that reads as measured.
  analysis::ReportOptions opt;
  opt.fields = {analysis::Field::Calls, analysis::Field::Syscalls, analysis::Field::Faults};
  EXPECT_NE(r.text(opt).find("\nCalls  Syscalls  Faults  Function\n"
                             "    1         -       2  main\n"),
            std::string::npos)
      << r.text(opt);
  EXPECT_NE(text.find("system calls were not\n  recorded (record --kernel=+syscalls adds them)"),
            std::string::npos)
      << text;
}

TEST(ProfileKernelReport, TextThreadsShowOnAndOffCpu) {
  Rendered with("sched,syscalls,faults");
  analysis::ReportOptions opt;
  opt.threads = true;
  std::string text = with.text(opt);
  EXPECT_NE(text.find("Thread 100 (demo): 14 events\n  on-CPU 500 ns, off-CPU 500 ns "
                      "(blocked 500 ns, runnable 0 ns), 2 system calls (610 ns), 2 faults\n"),
            std::string::npos)
      << text;
  Rendered without("");
  EXPECT_EQ(without.text(opt).find("on-CPU"), std::string::npos);
}

TEST(ProfileKernelReport, TextSyscallsTable) {
  Rendered with("sched,syscalls");
  analysis::ReportOptions opt;
  opt.syscalls = true;
  std::string text = with.text(opt);
  EXPECT_NE(text.find("Count   Total     Avg     Max  Errors  Syscall    Function\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("    1  600 ns  600 ns  600 ns       0  nanosleep  a\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("    1   10 ns   10 ns   10 ns       1  read       b [libx.so]\n"),
            std::string::npos)
      << text;
  EXPECT_LT(text.find("nanosleep"), text.find("read"));
  EXPECT_EQ(text.find("Function\n"), text.rfind("Function\n"));  // no function table

  Rendered none("sched");
  none.p.syscalls.clear();
  EXPECT_NE(none.text(opt).find("No system calls recorded (the trace has no syscalls kernel "
                                "events)."),
            std::string::npos);
}

TEST(ProfileKernelReport, JsonKernelFields) {
  Rendered with("sched,syscalls,faults,proc");
  analysis::ReportOptions opt;
  opt.threads = true;
  auto doc = with.json(opt);
  EXPECT_EQ(doc["report_version"], 1);
  EXPECT_EQ(doc["kernel_events"], "sched,syscalls,faults,proc");

  nlohmann::json a, m;
  for (const auto& f : doc["functions"]) {
    if (f["name"] == "a") a = f;
    if (f["name"] == "main") m = f;
  }
  ASSERT_TRUE(a.is_object() && m.is_object());
  EXPECT_EQ(a["offcpu_ns"], 500);
  EXPECT_EQ(a["offcpu_blocked_ns"], 500);
  EXPECT_EQ(a["offcpu_runnable_ns"], 0);
  EXPECT_EQ(a["syscall_ns"], 600);
  EXPECT_EQ(a["syscalls"], 1);
  EXPECT_EQ(a["faults"], 0);
  EXPECT_EQ(a["self_offcpu_ns"], 500);
  EXPECT_EQ(a["self_syscalls"], 1);
  EXPECT_EQ(m["offcpu_ns"], 500);
  EXPECT_EQ(m["self_offcpu_ns"], 0);
  EXPECT_EQ(m["self_offcpu_blocked_ns"], 0);
  EXPECT_EQ(m["self_offcpu_runnable_ns"], 0);
  EXPECT_EQ(m["syscall_ns"], 610);
  EXPECT_EQ(m["self_syscall_ns"], 0);
  EXPECT_EQ(m["syscalls"], 2);
  EXPECT_EQ(m["faults"], 2);
  EXPECT_EQ(m["self_faults"], 1);
  ASSERT_EQ(m["per_thread"].size(), 1u);
  EXPECT_EQ(m["per_thread"][0]["syscalls"], 2);
  EXPECT_EQ(m["per_thread"][0]["self_faults"], 1);

  const auto& t = doc["threads"][0];
  EXPECT_EQ(t["oncpu_ns"], 500);
  EXPECT_EQ(t["offcpu_ns"], 500);
  EXPECT_EQ(t["offcpu_blocked_ns"], 500);
  EXPECT_EQ(t["offcpu_runnable_ns"], 0);
  EXPECT_EQ(t["syscall_ns"], 610);
  EXPECT_EQ(t["syscalls"], 2);
  EXPECT_EQ(t["faults"], 2);

  ASSERT_EQ(doc["syscalls"].size(), 2u);
  const auto& r = doc["syscalls"][1];
  EXPECT_EQ(r["function"], "b");
  EXPECT_EQ(r["module"], "libx.so");
  EXPECT_EQ(r["syscall"], "read");
  EXPECT_EQ(r["nr"], 0);
  EXPECT_EQ(r["count"], 1);
  EXPECT_EQ(r["total_ns"], 10);
  EXPECT_EQ(r["avg_ns"], 10);
  EXPECT_EQ(r["max_ns"], 10);
  EXPECT_EQ(r["errors"], 1);
}

TEST(ProfileKernelReport, JsonFieldsAreZeroWithoutKernelEvents) {
  // A trace without kernel events: every field there, 0; no syscalls array.
  Seq s;
  s.E(0, MAIN).E(10, A).X(20, A).X(30, MAIN);
  analysis::Profile p = build(s, 30);
  formats::TraceHeader h = header("");
  std::vector<std::string> warnings;
  analysis::ReportOptions opt;
  opt.threads = true;
  auto doc = nlohmann::json::parse(render_json({h, p, warnings}, opt));
  EXPECT_EQ(doc["kernel_events"], "");
  EXPECT_FALSE(doc.contains("syscalls"));
  const char* fields[] = {"offcpu_ns",
                          "offcpu_blocked_ns",
                          "offcpu_runnable_ns",
                          "syscall_ns",
                          "syscalls",
                          "faults",
                          "self_offcpu_ns",
                          "self_offcpu_blocked_ns",
                          "self_offcpu_runnable_ns",
                          "self_syscall_ns",
                          "self_syscalls",
                          "self_faults"};
  for (const auto& f : doc["functions"])
    for (const char* name : fields) {
      EXPECT_EQ(f[name], 0) << name;
      EXPECT_EQ(f["per_thread"][0][name], 0) << name;
    }
  for (const char* name :
       {"offcpu_ns", "offcpu_blocked_ns", "offcpu_runnable_ns", "syscall_ns", "syscalls", "faults"})
    EXPECT_EQ(doc["threads"][0][name], 0) << name;
  EXPECT_EQ(doc["threads"][0]["oncpu_ns"], 30);

  // Recorded with the syscalls group but none made: an empty array.
  h.kernel_events = "syscalls";
  doc = nlohmann::json::parse(render_json({h, p, warnings}, opt));
  EXPECT_EQ(doc["syscalls"], nlohmann::json::array());
}
