// Putting code into a running process and patching it with every thread
// stopped (fastpath/inject/, docs/fast-path.md "Injection"), on a real
// multi-threaded program: tests/targets/target_fastpath_inject.c, whose
// worker threads call answer() (returns 7) in a loop while a reader thread
// is blocked in read(), a sleeper in nanosleep and the main thread in
// pthread_join. The test maps a code region near the executable, writes
// `mov $42,%eax; ret` into it, patches answer's entry with a jmp to it:
// every call started afterwards returns 42; undo: 7 again. Around it: the
// blocked calls go on correctly (their restart survives remote system calls
// run in those very threads), a signal sent during the stop is handled
// once, no tracer is left, the region is in /proc/PID/maps exactly while
// mapped; a second tracer is refused clearly; a SIGKILLed injector leaves
// the program running. Needs ptrace (root in CI).
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "fastpath/inject/code_patch.h"
#include "fastpath/inject/remote_region.h"
#include "fastpath/inject/remote_syscall.h"
#include "fastpath/inject/stopped_process.h"
#include "tests/integration/env.h"
#include "tests/integration/run.h"

namespace atrace::it {
namespace {

using namespace std::chrono_literals;
using fastpath::AddressRange;
using fastpath::CodePatch;
using fastpath::PatchSite;
using fastpath::RemoteRegion;
using fastpath::RemoteSyscall;
using fastpath::StoppedProcess;

constexpr const char* kTarget = TARGET_FASTPATH_INJECT_BIN;
constexpr long kSleepMs = 1500;

bool can_ptrace(std::string& why) {
  if (geteuid() == 0) return true;
  why = "needs root (ptrace of a process and /proc/PID/mem writes)";
  return false;
}

#define REQUIRE_PTRACE()          \
  do {                            \
    std::string why;              \
    if (!can_ptrace(why)) {       \
      if (in_ci()) FAIL() << why; \
      GTEST_SKIP() << why;        \
    }                             \
  } while (0)

std::map<std::string, std::string> fields(const std::string& line) {
  std::map<std::string, std::string> out;
  std::istringstream in(line);
  std::string word;
  while (in >> word) {
    size_t eq = word.find('=');
    if (eq != std::string::npos) out[word.substr(0, eq)] = word.substr(eq + 1);
  }
  return out;
}

pid_t tracer_pid(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("TracerPid:", 0) == 0) return std::atoi(line.c_str() + 10);
  return -1;
}

bool maps_has(pid_t pid, uint64_t address) {
  for (const auto& e : fastpath::read_maps(pid))
    if (e.start <= address && address < e.end) return true;
  return false;
}

// The target, started with a FIFO to command it through.
class InjectTarget {
 public:
  explicit InjectTarget(int workers)
      : fifo_(dir_.file("cmd")),
        child_((mkfifo(fifo_.c_str(), 0600),
                std::vector<std::string>{kTarget, fifo_, std::to_string(workers),
                                         std::to_string(kSleepMs)})),
        workers_(workers) {
    auto ready = child_.wait_for_line("ready ", 10s);
    if (!ready) throw std::runtime_error("target did not start: " + child_.out());
    auto f = fields(*ready);
    pid_ = std::stoi(f["pid"]);
    answer_ = std::stoull(f["answer"], nullptr, 16);
    reader_ = std::stoi(f["reader"]);
    sleeper_ = std::stoi(f["sleeper"]);
    epoller_ = std::stoi(f["epoller"]);
  }
  ~InjectTarget() {
    if (child_.running()) send("quit");
    child_.wait(5s);
  }

  pid_t pid() const { return pid_; }
  uint64_t answer() const { return answer_; }
  pid_t reader() const { return reader_; }
  pid_t sleeper() const { return sleeper_; }
  pid_t epoller() const { return epoller_; }
  int workers() const { return workers_; }
  Child& child() { return child_; }

  void send(const std::string& command) {
    int fd = open(fifo_.c_str(), O_WRONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    std::string line = command + "\n";
    ASSERT_EQ(write(fd, line.data(), line.size()), static_cast<ssize_t>(line.size()));
    close(fd);
  }
  std::map<std::string, std::string> report() {
    send("report");
    auto line = child_.wait_for_line("report ", 10s);
    if (!line) throw std::runtime_error("no report from the target: " + child_.out());
    return fields(*line);
  }
  // A new epoch, then the report once every worker made calls in it.
  std::map<std::string, std::string> epoch_report() {
    send("epoch");
    if (!child_.wait_for_line("epoch ", 10s)) throw std::runtime_error("no epoch: " + child_.out());
    for (int i = 0; i < 1000; ++i) {
      auto r = report();
      if (std::stoi(r["busy"]) == workers_) return r;
      std::this_thread::sleep_for(10ms);
    }
    throw std::runtime_error("workers did not all run: " + child_.out());
  }
  std::vector<std::string> lines(const std::string& prefix) const {
    std::vector<std::string> out;
    std::istringstream in(child_.out());
    std::string line;
    while (std::getline(in, line))
      if (line.rfind(prefix, 0) == 0) out.push_back(line);
    return out;
  }

 private:
  TempDir dir_;
  std::string fifo_;
  Child child_;
  int workers_;
  pid_t pid_ = 0;
  uint64_t answer_ = 0;
  pid_t reader_ = 0, sleeper_ = 0, epoller_ = 0;
};

std::vector<std::byte> bytes(std::initializer_list<int> v) {
  std::vector<std::byte> out;
  for (int b : v) out.push_back(static_cast<std::byte>(b));
  return out;
}

std::vector<std::byte> jmp_rel32(uint64_t from, uint64_t to) {
  int64_t d = static_cast<int64_t>(to) - static_cast<int64_t>(from + 5);
  EXPECT_TRUE(d >= INT32_MIN && d <= INT32_MAX);
  auto rel = static_cast<uint32_t>(static_cast<int32_t>(d));
  return bytes({0xe9, static_cast<int>(rel & 0xff), static_cast<int>((rel >> 8) & 0xff),
                static_cast<int>((rel >> 16) & 0xff), static_cast<int>(rel >> 24)});
}

AddressRange executable_range(pid_t pid) {
  std::string exe = std::filesystem::canonical(kTarget).string();
  AddressRange r = fastpath::module_range(fastpath::read_maps(pid), exe);
  EXPECT_NE(r.end, 0u) << exe << " not in the maps of " << pid;
  return r;
}

// Stops `target` until `tid` is inside a system call the kernel will
// restart (it nearly always is: it sleeps or reads between rare lines).
void stop_inside_syscall(StoppedProcess& stopped, pid_t tid) {
  for (int i = 0; i < 20 && !stopped.thread(tid).restarting_syscall(); ++i) stopped.restop(1ms);
  ASSERT_TRUE(stopped.thread(tid).restarting_syscall()) << "thread " << tid;
}

// Every sleep of the sleeper took its whole duration and returned 0.
void expect_full_sleeps(const InjectTarget& t) {
  for (const std::string& line : t.lines("slept ")) {
    auto f = fields(line);
    EXPECT_EQ(f["ret"], "0") << line;
    EXPECT_EQ(f["errno"], "0") << line;
    EXPECT_GE(std::stol(f["ms"]), kSleepMs) << line;
  }
}

// Waits until the sleeper printed two sleeps more than the `before` it had
// when a stop began: the second one at the latest is the sleep the stop
// interrupted (the first may have ended just before the stop).
void wait_for_sleeps(InjectTarget& t, size_t before) {
  for (int i = 0; i < 600 && t.lines("slept ").size() < before + 2; ++i) {
    t.report();
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_GE(t.lines("slept ").size(), before + 2);
}

TEST(FastPathInject, PatchedEntryThenUndoWithBlockedThreadsAndSignal) {
  REQUIRE_PTRACE();
  InjectTarget t(3);
  auto before = t.epoch_report();
  EXPECT_EQ(before["fortytwos"], "0");
  EXPECT_EQ(before["sevens"], before["calls"]);

  uint64_t code_at = 0;
  std::optional<CodePatch> patch;
  std::optional<RemoteRegion> code;
  {
    StoppedProcess stopped(t.pid());
    // The workers, the reader, the sleeper, the epoller and main.
    EXPECT_EQ(stopped.threads().size(), static_cast<size_t>(t.workers() + 4));
    // Sent while every thread is stopped: must be handled once, after.
    ASSERT_EQ(kill(t.pid(), SIGUSR1), 0);
    // The system calls run in the thread blocked in read(): its read must
    // restart afterwards (-ERESTARTSYS kept through them).
    stop_inside_syscall(stopped, t.reader());
    RemoteSyscall sys(stopped, t.reader());
    AddressRange exe = executable_range(t.pid());
    code = RemoteRegion::map_near(sys, exe, 4096, PROT_READ | PROT_EXEC, "atrace-fastpath-code");
    code_at = code->address();
    int64_t distance = static_cast<int64_t>(code_at) - static_cast<int64_t>(t.answer());
    EXPECT_LT(std::abs(distance), int64_t{1} << 31);
    code->write(sys.memory(), 0, bytes({0xb8, 42, 0, 0, 0, 0xc3}));  // mov $42,%eax; ret
    std::vector<PatchSite> sites{{t.answer(), jmp_rel32(t.answer(), code_at)}};
    patch = CodePatch::apply(stopped, std::move(sites));
    stopped.release();
    std::printf(
        "patch: stopped %zu threads in %lld us, held %lld us, %u stop(s), %u signal(s) passed on\n",
        stopped.threads().size(), static_cast<long long>(stopped.times().to_stop.count() / 1000),
        static_cast<long long>(stopped.times().held.count() / 1000), patch->stops(),
        stopped.times().signals_passed);
  }
  EXPECT_EQ(tracer_pid(t.pid()), 0);
  EXPECT_TRUE(maps_has(t.pid(), code_at));
  auto patched = t.epoch_report();
  EXPECT_EQ(patched["sevens"], "0") << t.child().out();
  EXPECT_EQ(patched["others"], "0");
  EXPECT_EQ(patched["fortytwos"], patched["calls"]);
  EXPECT_GT(std::stoul(patched["calls"]), 0u);

  // The signal sent during the stop: handled, once.
  for (int i = 0; i < 500 && t.report()["usr1"] == "0"; ++i) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(t.report()["usr1"], "1");

  size_t sleeps = t.lines("slept ").size();
  {
    StoppedProcess stopped(t.pid());
    // No thread may be inside the code region that is unmapped next.
    auto undone = patch->undo(stopped, std::array{code->range()});
    EXPECT_EQ(undone.restored, 1u);
    EXPECT_TRUE(undone.changed.empty());
    // The unmap runs in the sleeper, inside nanosleep: it must sleep its
    // whole time afterwards (-ERESTART_RESTARTBLOCK kept).
    stop_inside_syscall(stopped, t.sleeper());
    RemoteSyscall sys(stopped, t.sleeper());
    code->unmap(sys);
  }
  EXPECT_EQ(tracer_pid(t.pid()), 0);
  EXPECT_FALSE(maps_has(t.pid(), code_at));
  auto undone = t.epoch_report();
  EXPECT_EQ(undone["fortytwos"], "0");
  EXPECT_EQ(undone["others"], "0");
  EXPECT_EQ(undone["sevens"], undone["calls"]);
  EXPECT_EQ(undone["usr1"], "1");

  wait_for_sleeps(t, sleeps);
  expect_full_sleeps(t);
  EXPECT_TRUE(t.lines("read failed").empty()) << t.child().out();
}

// Remote system calls in the main thread (blocked in pthread_join: a
// futex) and a ring-like region made anywhere, written and read from
// outside, with MADV_WIPEONFORK on part of it.
// epoll_wait fails with EINTR when its thread is stopped, even with no
// signal handler (signal(7)): every stop sets it to start again, so the
// program never sees it (the target exits 4 if its epoll_wait returns).
TEST(FastPathInject, StopsNeverShowEpollWaitAnEintr) {
  REQUIRE_PTRACE();
  InjectTarget t(1);
  const std::string syscall_file =
      "/proc/" + std::to_string(t.pid()) + "/task/" + std::to_string(t.epoller()) + "/syscall";
  const std::string stat_file =
      "/proc/" + std::to_string(t.pid()) + "/task/" + std::to_string(t.epoller()) + "/stat";
  // The call it sleeps in (state S), -1 while it is not asleep in one: a
  // thread just released has not entered its restarted call yet.
  auto blocked_in = [&] {
    std::ifstream stat(stat_file);
    std::string line;
    std::getline(stat, line);
    const size_t close = line.rfind(')');
    if (close == std::string::npos || close + 2 >= line.size() || line[close + 2] != 'S')
      return -1L;
    std::ifstream in(syscall_file);
    long nr = -1;
    in >> nr;
    return nr;
  };
  auto wait_blocked = [&] {
    for (int i = 0; i < 500 && blocked_in() != SYS_epoll_wait && blocked_in() != SYS_epoll_pwait;
         ++i)
      std::this_thread::sleep_for(10ms);
    return blocked_in();
  };
  const long nr = wait_blocked();
  ASSERT_TRUE(nr == SYS_epoll_wait || nr == SYS_epoll_pwait) << syscall_file << ": " << nr;
  unsigned restarted = 0;
  for (int i = 0; i < 5; ++i) {
    ASSERT_EQ(wait_blocked(), nr) << "stop " << i;
    StoppedProcess stopped(t.pid());
    const auto& e = stopped.thread(t.epoller());
    // Set to run the call again: at the syscall instruction, its number in rax.
    EXPECT_EQ(e.regs.rax, e.regs.orig_rax);
    EXPECT_EQ(static_cast<long>(e.regs.orig_rax), nr);
    stopped.release();
    restarted += stopped.times().calls_restarted;
  }
  EXPECT_EQ(restarted, 5u);
  auto after = t.epoch_report();
  EXPECT_EQ(after["sevens"], after["calls"]);
  EXPECT_TRUE(t.lines("epoll_wait returned").empty()) << t.child().out();
  EXPECT_TRUE(t.child().running());
  EXPECT_EQ(wait_blocked(), nr);
}

TEST(FastPathInject, DataRegionAnywhereReadWrittenFromOutside) {
  REQUIRE_PTRACE();
  InjectTarget t(2);
  t.epoch_report();
  uint64_t at = 0;
  {
    StoppedProcess stopped(t.pid());
    RemoteSyscall sys(stopped);
    EXPECT_EQ(sys.tid(), t.pid());
    RemoteRegion ring =
        RemoteRegion::map_anywhere(sys, 3 * 4096, PROT_READ | PROT_WRITE, "atrace-fastpath-ring");
    at = ring.address();
    ring.advise(sys, 4096, 4096, MADV_WIPEONFORK);
    auto data = bytes({1, 2, 3, 4, 5});
    ring.write(sys.memory(), 8192, data);
    std::vector<std::byte> back(5);
    ring.read(sys.memory(), 8192, back);
    EXPECT_EQ(back, data);
    EXPECT_THROW(ring.write(sys.memory(), 3 * 4096 - 2, data), fastpath::InjectError);
  }
  // Readable while the process runs, from outside.
  fastpath::ProcessMemory memory(t.pid());
  std::vector<std::byte> back(5);
  memory.read(at + 8192, back);
  EXPECT_EQ(back, bytes({1, 2, 3, 4, 5}));
  EXPECT_TRUE(maps_has(t.pid(), at));
  auto after = t.epoch_report();
  EXPECT_EQ(after["sevens"], after["calls"]);
  EXPECT_EQ(tracer_pid(t.pid()), 0);
}

// A process traced by someone else (here a child of the test that seized
// its main thread, as strace -p would) is refused with one clear error.
TEST(FastPathInject, AlreadyTracedIsRefused) {
  REQUIRE_PTRACE();
  InjectTarget t(2);
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t tracer = fork();
  ASSERT_GE(tracer, 0);
  if (tracer == 0) {
    char ok = ptrace(PTRACE_SEIZE, t.pid(), nullptr, nullptr) == 0 ? 'y' : 'n';
    (void)!write(ready[1], &ok, 1);
    pause();
    _exit(0);
  }
  close(ready[1]);
  char ok = 0;
  ASSERT_EQ(read(ready[0], &ok, 1), 1);
  close(ready[0]);
  ASSERT_EQ(ok, 'y');
  try {
    StoppedProcess stopped(t.pid());
    ADD_FAILURE() << "stopped a process traced by " << tracer;
  } catch (const fastpath::AlreadyTraced& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("already traced by process " + std::to_string(tracer)), std::string::npos)
        << msg;
  }
  kill(tracer, SIGKILL);
  waitpid(tracer, nullptr, 0);
  EXPECT_EQ(tracer_pid(t.pid()), 0);
  auto after = t.epoch_report();
  EXPECT_EQ(after["sevens"], after["calls"]);
}

// The injecting side SIGKILLed while it holds the target stopped, with a
// region mapped and answer() patched: the kernel detaches every thread,
// the program runs on, the region stays mapped and the patch keeps working.
TEST(FastPathInject, KilledInjectorLeavesTargetRunning) {
  REQUIRE_PTRACE();
  InjectTarget t(3);
  t.epoch_report();
  size_t sleeps = t.lines("slept ").size();
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t injector = fork();
  ASSERT_GE(injector, 0);
  if (injector == 0) {
    char ok = 'n';
    try {
      StoppedProcess stopped(t.pid());
      RemoteSyscall sys(stopped, t.sleeper());
      RemoteRegion code = RemoteRegion::map_near(sys, executable_range(t.pid()), 4096,
                                                 PROT_READ | PROT_EXEC, "atrace-fastpath-code");
      code.write(sys.memory(), 0, bytes({0xb8, 42, 0, 0, 0, 0xc3}));
      std::vector<PatchSite> sites{{t.answer(), jmp_rel32(t.answer(), code.address())}};
      CodePatch patch = CodePatch::apply(stopped, std::move(sites));
      ok = 'y';
      (void)!write(ready[1], &ok, 1);
      pause();  // holding every thread stopped until killed
    } catch (const std::exception& e) {
      std::fprintf(stderr, "injector: %s\n", e.what());
    }
    (void)!write(ready[1], &ok, 1);
    _exit(1);
  }
  close(ready[1]);
  char ok = 0;
  ASSERT_EQ(read(ready[0], &ok, 1), 1);
  close(ready[0]);
  ASSERT_EQ(ok, 'y');
  EXPECT_EQ(tracer_pid(t.pid()), injector);
  ASSERT_EQ(kill(injector, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(injector, &status, 0), injector);
  EXPECT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(tracer_pid(t.pid()), 0);
  auto after = t.epoch_report();
  EXPECT_EQ(after["sevens"], "0");
  EXPECT_EQ(after["fortytwos"], after["calls"]);
  wait_for_sleeps(t, sleeps);
  expect_full_sleeps(t);
}

// A thread that stays inside the bytes to replace (the reader, blocked in
// read(): its rip just after the syscall instruction) makes the batch wait
// and retry, then fail clearly, with nothing written.
TEST(FastPathInject, PatchRefusedWhileAThreadStaysInside) {
  REQUIRE_PTRACE();
  InjectTarget t(2);
  t.epoch_report();
  StoppedProcess stopped(t.pid());
  stop_inside_syscall(stopped, t.reader());
  uint64_t rip = stopped.thread(t.reader()).regs.rip;
  fastpath::ProcessMemory memory(t.pid());
  std::vector<std::byte> now(5);
  memory.read_any(rip - 2, now);
  EXPECT_EQ(now[0], std::byte{0x0f});  // syscall
  EXPECT_EQ(now[1], std::byte{0x05});
  std::vector<PatchSite> sites{{rip - 2, std::vector<std::byte>(5, std::byte{0xcc})}};
  try {
    CodePatch::apply(stopped, std::move(sites), {}, fastpath::RetryPolicy{3, 1000us});
    ADD_FAILURE() << "patched bytes a thread was inside";
  } catch (const fastpath::InjectError& e) {
    EXPECT_NE(std::string(e.what()).find("thread " + std::to_string(t.reader()) +
                                         " was inside the bytes to replace at each of 3 stops"),
              std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(stopped.held());
  std::vector<std::byte> after(5);
  memory.read_any(rip - 2, after);
  EXPECT_EQ(after, now);
  stopped.release();
  auto r = t.epoch_report();
  EXPECT_EQ(r["sevens"], r["calls"]);
  EXPECT_TRUE(t.lines("read failed").empty());
}

// A storm of queued signals (SIGRTMIN: one delivery per sigqueue, never
// merged) while the process is stopped and released again and again, with a
// system call run in a thread that takes them at each stop: every signal
// is handled exactly once (some arrive between a thread's interrupt and
// its stop: passed on by the stop, counted in StopTimes::signals_passed).
TEST(FastPathInject, QueuedSignalsDuringStopsAreHandledOnce) {
  REQUIRE_PTRACE();
  InjectTarget t(2);
  t.epoch_report();
  constexpr int kSignals = 5000;
  std::atomic<int> sent{0};
  std::thread sender([&] {
    for (int i = 0; i < kSignals; ++i) {
      sigval v{};
      while (sigqueue(t.pid(), SIGRTMIN, v) != 0) {
        if (errno != EAGAIN) return;  // the queue is full: let it drain
        std::this_thread::sleep_for(100us);
      }
      ++sent;
    }
  });
  unsigned passed = 0;
  int rounds = 0;
  for (; rounds < 30 || sent < kSignals; ++rounds) {
    StoppedProcess stopped(t.pid());
    RemoteSyscall sys(stopped, t.reader());
    EXPECT_EQ(sys.call(SYS_getpid), t.pid());
    passed += stopped.times().signals_passed;
    stopped.release();
  }
  sender.join();
  ASSERT_EQ(sent.load(), kSignals);
  unsigned long handled = 0;
  for (int i = 0; i < 500 && handled < kSignals; ++i) {
    handled = std::stoul(t.report()["rt"]);
    if (handled < kSignals) std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(handled, static_cast<unsigned long>(kSignals));
  std::printf("%d queued signals over %d stops: %lu handled, %u passed on during a stop\n",
              kSignals, rounds, handled, passed);
  EXPECT_EQ(tracer_pid(t.pid()), 0);
  auto after = t.epoch_report();
  EXPECT_EQ(after["sevens"], after["calls"]);
  EXPECT_TRUE(t.lines("read failed").empty());
}

// The target SIGKILLed while it is held: the next remote system call says
// the process is gone, the release does not hang, and the process's end
// is left to its parent (here the test's Child, which reaps it).
TEST(FastPathInject, TargetKilledWhileHeld) {
  REQUIRE_PTRACE();
  InjectTarget t(2);
  t.epoch_report();
  {
    StoppedProcess stopped(t.pid());
    RemoteSyscall sys(stopped);
    ASSERT_EQ(kill(t.pid(), SIGKILL), 0);
    EXPECT_THROW(sys.call(SYS_getpid), fastpath::ProcessGone);
  }
  Result r = t.child().wait(5s);
  EXPECT_EQ(r.term_signal, SIGKILL) << r.describe();
}

// A process under seccomp is not given system calls to run: its filter
// might kill it for one it does not expect.
TEST(FastPathInject, SeccompRefused) {
  REQUIRE_PTRACE();
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // An allow-everything filter: enough for Seccomp: 2 in /proc/PID/status.
    sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    sock_fprog prog{1, &allow};
    char ok = prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
                      syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == 0
                  ? 'y'
                  : 'n';
    (void)!write(ready[1], &ok, 1);
    pause();
    _exit(0);
  }
  close(ready[1]);
  char ok = 0;
  ASSERT_EQ(read(ready[0], &ok, 1), 1);
  close(ready[0]);
  ASSERT_EQ(ok, 'y');
  {
    StoppedProcess stopped(pid);
    try {
      RemoteSyscall sys(stopped);
      ADD_FAILURE() << "a system call offered to a process under seccomp";
    } catch (const fastpath::InjectError& e) {
      EXPECT_NE(std::string(e.what()).find("runs under seccomp"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(tracer_pid(pid), 0);
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

// Threads that start and end while the process is being stopped (one
// creates short-lived threads without pause): each stop gets every thread
// there is, those that ended meanwhile are dropped, the program goes on.
TEST(FastPathInject, StopsWhileThreadsComeAndGo) {
  REQUIRE_PTRACE();
  InjectTarget t(2);
  t.send("churn");
  ASSERT_TRUE(t.child().wait_for_line("churning", 10s));
  unsigned long churned = std::stoul(t.report()["churned"]);
  for (int i = 0; i < 100 && churned < 100; ++i) {
    std::this_thread::sleep_for(10ms);
    churned = std::stoul(t.report()["churned"]);
  }
  ASSERT_GE(churned, 100u) << "the churning thread does not run";
  size_t most = 0;
  for (int round = 0; round < 50; ++round) {
    StoppedProcess stopped(t.pid());
    // 2 workers, reader, sleeper, main, the churning thread, maybe a short one.
    EXPECT_GE(stopped.threads().size(), 6u);
    most = std::max(most, stopped.threads().size());
    for (const auto& th : stopped.threads()) EXPECT_NE(th.regs.rip, 0u);
  }
  std::printf("50 stops while threads come and go: up to %zu threads\n", most);
  EXPECT_EQ(tracer_pid(t.pid()), 0);
  unsigned long later = std::stoul(t.report()["churned"]);
  for (int i = 0; i < 100 && later == churned; ++i) {
    std::this_thread::sleep_for(10ms);
    later = std::stoul(t.report()["churned"]);
  }
  EXPECT_GT(later, churned);
  auto after = t.epoch_report();
  EXPECT_EQ(after["sevens"], after["calls"]);
}

// How long a batch of 100 patches stops a process of 8 busy worker
// threads (+ reader, sleeper, main). Printed, not asserted (a speed goal:
// docs/BENCHMARKS.md); the patches go into a region of its own, one per
// page, so that each write copies a page as a function entry's would.
TEST(FastPathInject, StopTimeOfABatchOf100Patches) {
  REQUIRE_PTRACE();
  InjectTarget t(8);
  t.epoch_report();
  constexpr int kSites = 100;
  std::optional<RemoteRegion> area;
  {
    StoppedProcess stopped(t.pid());
    RemoteSyscall sys(stopped);
    area = RemoteRegion::map_near(sys, executable_range(t.pid()), kSites * 4096,
                                  PROT_READ | PROT_EXEC, "atrace-fastpath-bench");
  }
  // Microseconds of each phase, per round: all threads stopped, the 100
  // sites read and written, every thread detached, the whole stop.
  std::vector<long long> to_stop, write, detach, held;
  auto us = [](auto d) { return std::chrono::duration_cast<std::chrono::microseconds>(d).count(); };
  for (int round = 0; round < 20; ++round) {
    std::vector<PatchSite> sites;
    for (int i = 0; i < kSites; ++i) {
      uint64_t at = area->address() + static_cast<uint64_t>(i) * 4096 + 64;
      sites.push_back({at, jmp_rel32(at, t.answer())});
    }
    std::optional<CodePatch> patch;
    {
      StoppedProcess stopped(t.pid());
      auto t0 = std::chrono::steady_clock::now();
      patch = CodePatch::apply(stopped, std::move(sites));
      auto t1 = std::chrono::steady_clock::now();
      stopped.release();
      EXPECT_EQ(patch->size(), static_cast<size_t>(kSites));
      to_stop.push_back(us(stopped.times().to_stop));
      write.push_back(us(t1 - t0));
      detach.push_back(us(stopped.times().detach));
      held.push_back(us(stopped.times().held));
    }
    StoppedProcess stopped(t.pid());
    EXPECT_EQ(patch->undo(stopped).restored, static_cast<unsigned>(kSites));
  }
  auto median = [](std::vector<long long> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  auto worst = [](const std::vector<long long>& v) {
    return *std::max_element(v.begin(), v.end());
  };
  auto over_10ms = std::count_if(held.begin(), held.end(), [](long long v) { return v > 10000; });
  std::printf(
      "batch of %d patches, %d threads (%d busy), 20 rounds, median (max) us: stop %lld (%lld), "
      "write %lld (%lld), detach %lld (%lld), program held %lld (%lld), %ld round(s) over 10 ms\n",
      kSites, t.workers() + 3, t.workers(), median(to_stop), worst(to_stop), median(write),
      worst(write), median(detach), worst(detach), median(held), worst(held),
      static_cast<long>(over_10ms));
  auto after = t.epoch_report();
  EXPECT_EQ(after["sevens"], after["calls"]);
  EXPECT_EQ(tracer_pid(t.pid()), 0);
}

}  // namespace
}  // namespace atrace::it
