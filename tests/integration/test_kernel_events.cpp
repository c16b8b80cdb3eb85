// Kernel events merged with function events (issue 4), on the real kernel:
// target_kernel's functions sleep, make exactly 1000 system calls, touch
// 1000 fresh pages, spin, start a named thread and fork a child, and the
// report must attribute each kind of kernel time to the function that
// spent it.
#include <map>
#include <set>
#include <sstream>

#include "tests/integration/fixture.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

constexpr long long kMs = 1000 * 1000;

class KernelEvents : public IntegrationTest {
 protected:
  // Records every function of target_kernel with every kernel group (or
  // `extra`), and reads the JSON report.
  std::optional<nlohmann::json> record_target(const std::vector<std::string>& extra = {
                                                  "--kernel=all"}) {
    std::string out = file("k.data");
    run_ = record(out,
                  "sleeper,syscall_caller,getppid_1000,toucher,spinner,start_worker,"
                  "worker_main,worker_job,fork_child,child_job,main",
                  {Paths::target_kernel, tag_arg()}, extra);
    if (!run_.exited(0)) {
      ADD_FAILURE() << run_.describe();
      return std::nullopt;
    }
    trace_ = out;
    auto rep = report_json(out);
    if (rep) {
      EXPECT_EQ((*rep)["lost_events"], 0);
    }
    return rep;
  }
  static long long field(const nlohmann::json& rep, const char* fn, const char* name) {
    return function_field(rep, fn, name);
  }

  Result run_;
  std::string trace_;
};

// With functions probed, the default leaves system calls out (their
// tracepoints tax every traced call: kernel_groups.h); +/- change it.
TEST_F(KernelEvents, HeaderNamesTheDefaultGroups) {
  auto rep = record_target({});
  ASSERT_TRUE(rep);
  EXPECT_EQ((*rep)["kernel_events"], "sched,faults,proc");
  EXPECT_EQ(field(*rep, "sleeper", "syscalls"), 0);
  EXPECT_GT(field(*rep, "sleeper", "offcpu_blocked_ns"), 0) << "off-CPU time stays on by default";
  rep = record_target({"--kernel=+syscalls,-faults"});
  ASSERT_TRUE(rep);
  EXPECT_EQ((*rep)["kernel_events"], "sched,syscalls,proc");
  EXPECT_GE(field(*rep, "sleeper", "syscalls"), 1);
}

// 50 ms of nanosleep: at least 45 ms blocked off-CPU, little on-CPU.
TEST_F(KernelEvents, SleepIsBlockedOffCpu) {
  auto rep = record_target();
  ASSERT_TRUE(rep);
  long long total = field(*rep, "sleeper", "total_ns");
  long long blocked = field(*rep, "sleeper", "offcpu_blocked_ns");
  EXPECT_GE(blocked, 45 * kMs) << rep->dump(1);
  EXPECT_EQ(field(*rep, "sleeper", "self_offcpu_blocked_ns"), blocked);
  EXPECT_LE(field(*rep, "sleeper", "offcpu_ns"), total);
  EXPECT_GE(field(*rep, "sleeper", "syscalls"), 1);  // nanosleep itself
  // main called it: main's inclusive off-CPU contains it, its self does not
  // (what main's callees spent blocked is at least the sleeper's).
  EXPECT_GE(field(*rep, "main", "offcpu_blocked_ns"), blocked);
  EXPECT_GE(
      field(*rep, "main", "offcpu_blocked_ns") - field(*rep, "main", "self_offcpu_blocked_ns"),
      blocked);
}

// Exactly 1000 getppid calls: all attributed to getppid_1000, none to the
// self numbers of its caller.
TEST_F(KernelEvents, SystemCallsAreCountedExactlyWhereTheyHappen) {
  auto rep = record_target();
  ASSERT_TRUE(rep);
  EXPECT_EQ(field(*rep, "getppid_1000", "syscalls"), 1000);
  EXPECT_EQ(field(*rep, "getppid_1000", "self_syscalls"), 1000);
  EXPECT_GT(field(*rep, "getppid_1000", "self_syscall_ns"), 0);
  EXPECT_LE(field(*rep, "getppid_1000", "syscall_ns"), field(*rep, "getppid_1000", "total_ns"));
  EXPECT_EQ(field(*rep, "syscall_caller", "syscalls"), 1000);
  EXPECT_EQ(field(*rep, "syscall_caller", "self_syscalls"), 0);
  EXPECT_EQ(field(*rep, "syscall_caller", "self_syscall_ns"), 0);

  // The per-function system call table: getppid, 1000 times, no errors.
  auto sys = report_json(trace_, {"--syscalls"});
  ASSERT_TRUE(sys);
  bool found = false;
  for (const auto& row : (*sys)["syscalls"]) {
    if (row["syscall"] != "getppid") continue;
    EXPECT_EQ(row["function"], "getppid_1000") << row.dump();
    EXPECT_EQ(row["count"], 1000) << row.dump();
    EXPECT_EQ(row["errors"], 0) << row.dump();
    EXPECT_EQ(row["nr"], 110);
    found = true;
  }
  EXPECT_TRUE(found) << (*sys)["syscalls"].dump(1);
  Result text = run({Paths::atrace, "report", "-i", trace_, "--syscalls"});
  ASSERT_TRUE(text.exited(0)) << text.describe();
  EXPECT_NE(text.out.find("getppid"), std::string::npos) << text.out;
}

TEST_F(KernelEvents, FreshPagesFault) {
  auto rep = record_target();
  ASSERT_TRUE(rep);
  EXPECT_GE(field(*rep, "toucher", "faults"), 1000);
  EXPECT_GE(field(*rep, "toucher", "self_faults"), 1000);
  EXPECT_LT(field(*rep, "sleeper", "faults"), 100);
}

// Pure computation: never blocked; off-CPU only while preempted, and the
// on-CPU rest matches the thread CPU time the function measured itself
// (the kernel's own accounting), however loaded the machine is.
TEST_F(KernelEvents, CpuBoundFunctionStaysOnCpu) {
  auto rep = record_target();
  ASSERT_TRUE(rep);
  long long total = field(*rep, "spinner", "total_ns");
  long long offcpu = field(*rep, "spinner", "offcpu_ns");
  EXPECT_GE(total, 45 * kMs);
  EXPECT_EQ(field(*rep, "spinner", "offcpu_blocked_ns"), 0);
  EXPECT_EQ(offcpu, field(*rep, "spinner", "offcpu_runnable_ns"));
  EXPECT_EQ(field(*rep, "spinner", "syscalls"), 2);  // its two CPU clock reads
  auto cpu = printed_count(run_.out, "spinner_cpu_ns");
  ASSERT_TRUE(cpu) << run_.describe();
  long long oncpu = total - offcpu;
  EXPECT_NEAR(static_cast<double>(oncpu), static_cast<double>(*cpu), 2.0 * kMs + 0.1 * *cpu)
      << "report on-CPU " << oncpu << " ns vs the thread's CPU clock " << *cpu << " ns";
}

// The thread started during the run appears with the name it gave itself,
// its calls counted exactly; per-thread kernel totals add up.
TEST_F(KernelEvents, NewThreadAndItsNameAppear) {
  auto rep = record_target();
  ASSERT_TRUE(rep);
  EXPECT_EQ(calls_of(*rep, "worker_job"), 100);
  auto threads = report_json(trace_, {"--threads"});
  ASSERT_TRUE(threads);
  bool worker = false;
  for (const auto& t : (*threads)["threads"]) {
    EXPECT_GE(t["oncpu_ns"].get<long long>(), 0);
    if (t["name"] == "kt-worker") {
      worker = true;
      EXPECT_GT(t["oncpu_ns"].get<long long>(), 0) << t.dump();
    }
    if (t["tid"] == t["pid"] && t["pid"] == (*rep)["pid"]) {
      EXPECT_GE(t["offcpu_blocked_ns"].get<long long>(), 45 * kMs) << t.dump();
      EXPECT_GE(t["syscalls"].get<long long>(), 1000) << t.dump();
    }
  }
  EXPECT_TRUE(worker) << (*threads)["threads"].dump(1);
}

// Without --follow-forks the child runs untraced; with it, its calls are
// counted exactly and its process appears.
TEST_F(KernelEvents, ForkedChildIsFollowedOnlyWhenAsked) {
  auto rep = record_target();
  ASSERT_TRUE(rep);
  EXPECT_EQ(calls_of(*rep, "child_job"), -1) << "child traced without --follow-forks";
  EXPECT_EQ(calls_of(*rep, "fork_child"), 1);

  auto followed = record_target({"--follow-forks", "--kernel=all"});
  ASSERT_TRUE(followed);
  EXPECT_EQ(calls_of(*followed, "child_job"), 50);
  EXPECT_EQ(calls_of(*followed, "fork_child"), 1) << "the child returned from fork_child?";
  EXPECT_EQ(calls_of(*followed, "worker_job"), 100);
  std::set<long long> pids;
  for (const auto& t : (*followed)["threads"]) pids.insert(t["pid"].get<long long>());
  EXPECT_EQ(pids.size(), 2u) << (*followed)["threads"].dump(1);
}

// atrace script over a trace of two processes and several threads: global
// time order across threads and CPUs, and every function exit after its
// entry on the same thread, properly nested.
TEST_F(KernelEvents, ScriptIsInTimeOrderWithExitsAfterEntries) {
  auto rep = record_target({"--follow-forks", "--kernel=all"});
  ASSERT_TRUE(rep);
  Result s = run({Paths::atrace, "script", "-i", trace_, "--fields=tid,cpu,time,kind,details"});
  ASSERT_TRUE(s.exited(0)) << s.describe();
  std::istringstream in(s.out);
  std::map<long, std::vector<std::string>> stacks;  // tid -> open functions
  std::set<long> tids, cpus;
  std::map<std::string, long> kinds;
  double last = 0;
  size_t lines = 0;
  for (std::string line; std::getline(in, line); ++lines) {
    // "  TID [CPU] SEC.NSEC: KIND: DETAILS"
    std::istringstream l(line);
    long tid = 0;
    std::string cpu, time, kind;
    l >> tid >> cpu >> time >> kind;
    ASSERT_FALSE(l.fail()) << line;
    std::string details;
    std::getline(l, details);
    double t = std::stod(time);
    ASSERT_GE(t, last) << "out of time order: " << line;
    last = t;
    tids.insert(tid);
    cpus.insert(std::stol(cpu.substr(1)));
    kinds[kind]++;
    // Function names, without indentation and the duration an exit shows.
    size_t start = details.find_first_not_of(' ');
    std::string fn = start == std::string::npos ? "" : details.substr(start);
    if (kind == "entry:") {
      stacks[tid].push_back(fn);
    } else if (kind == "exit:") {
      fn = fn.substr(0, fn.rfind(" ("));
      ASSERT_FALSE(stacks[tid].empty()) << "exit without entry: " << line;
      EXPECT_EQ(stacks[tid].back(), fn) << "exit of another call than the innermost: " << line;
      stacks[tid].pop_back();
    }
  }
  EXPECT_GT(lines, 2000u);
  EXPECT_GE(tids.size(), 3u);  // main, kt-worker, the child
  EXPECT_EQ(kinds["entry:"], kinds["exit:"]) << "every selected call returns";
  EXPECT_GE(kinds["syscall:"], 1000);
  EXPECT_GE(kinds["fault:"], 1000);
  EXPECT_GE(kinds["switch-out:"], 1);
  EXPECT_EQ(kinds["fork:"], 2);
  EXPECT_EQ(kinds["proc-exit:"], 2);  // the child and the target
}

TEST_F(KernelEvents, NoKernelRecordsFunctionsOnly) {
  auto rep = record_target({"--no-kernel"});
  ASSERT_TRUE(rep);
  EXPECT_EQ((*rep)["kernel_events"], "");
  EXPECT_EQ(field(*rep, "getppid_1000", "syscalls"), 0);
  EXPECT_EQ(field(*rep, "sleeper", "offcpu_ns"), 0);
  EXPECT_EQ(calls_of(*rep, "worker_job"), 100);
  Result info = run({Paths::atrace, "info", "-i", trace_});
  ASSERT_TRUE(info.exited(0)) << info.describe();
  EXPECT_NE(info.out.find("Kernel events:   none"), std::string::npos) << info.out;
}

// One group alone: system calls, and nothing of the other groups.
TEST_F(KernelEvents, OneGroupAlone) {
  auto rep = record_target({"--kernel=syscalls"});
  ASSERT_TRUE(rep);
  EXPECT_EQ((*rep)["kernel_events"], "syscalls");
  EXPECT_EQ(field(*rep, "getppid_1000", "syscalls"), 1000);
  EXPECT_EQ(field(*rep, "sleeper", "offcpu_ns"), 0);
  EXPECT_EQ(field(*rep, "toucher", "faults"), 0);
  Result info = run({Paths::atrace, "info", "-i", trace_});
  ASSERT_TRUE(info.exited(0)) << info.describe();
  EXPECT_EQ(info.out.find("switch-out"), std::string::npos) << info.out;
  EXPECT_EQ(info.out.find("fault "), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("syscall "), std::string::npos) << info.out;
}

// No --select: a recording of kernel events alone, like perf trace.
TEST_F(KernelEvents, KernelEventsAloneNeedNoSelection) {
  std::string out = file("kernel-only.data");
  Result r = record(out, "", {Paths::target_kernel, tag_arg()}, {"--kernel=syscalls,proc"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  EXPECT_NE(r.err.find("kernel events written"), std::string::npos) << r.err;
  // Said at the end, and the report is the kernel's view, not an empty
  // function table (issue 31).
  EXPECT_NE(r.err.find("kernel events only, no function was selected (--select=PATTERN"),
            std::string::npos)
      << r.err;
  Result text = run({Paths::atrace, "report", "-i", out});
  ASSERT_TRUE(text.exited(0)) << text.describe();
  EXPECT_NE(text.out.find("No function calls recorded: kernel events only"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("system calls ("), std::string::npos) << text.out;  // per thread
  bool getppid = false;
  std::istringstream rows(text.out);
  for (std::string line; std::getline(rows, line);) {
    std::istringstream words(line);
    std::string count;
    words >> count;
    if (line.find(" getppid ") != std::string::npos) getppid = count == "1000";
  }
  EXPECT_TRUE(getppid) << "no getppid row of 1000 calls:\n" << text.out;
  Result info = run({Paths::atrace, "info", "-i", out});
  ASSERT_TRUE(info.exited(0)) << info.describe();
  EXPECT_NE(info.out.find("Probes: 0"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("fork 2"), std::string::npos) << info.out;  // thread + child
  EXPECT_NE(info.out.find("exec 1"), std::string::npos) << info.out;
  // Without kernel events there would be nothing to record: one clear error.
  Result none = record(file("none.data"), "", {Paths::target_kernel, tag_arg()}, {"--no-kernel"});
  EXPECT_NE(expect_one_error_line(none).find("nothing to record"), std::string::npos);
}

TEST_F(KernelEvents, UnknownGroupIsOneClearError) {
  Result r = record(file("bad.data"), "sleeper", {Paths::target_kernel, tag_arg()},
                    {"--kernel=sched,bogus"});
  std::string line = expect_one_error_line(r);
  EXPECT_NE(line.find("bogus"), std::string::npos) << line;
}

}  // namespace
}  // namespace atrace::it
