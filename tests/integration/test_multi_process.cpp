// Several processes in one recording: `-p A,B` and `--cgroup=PATH` (a
// cgroup v2 made here, as systemd makes a service's), exact counts per
// process, a process started in the cgroup after atrace attached, and the
// bad inputs (one line each, no file, no probe left).
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/integration/fixture.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

namespace fs = std::filesystem;

// target_dlopen N M calls plugin_fn N + M times (through a library it
// dlopens: each process finds it in its own search), after --wait=FILE.
constexpr int kFirstA = 3, kSecondA = 4, kFirstB = 5, kSecondB = 6, kOther = 2;
// target_c N calls leaf() 3 * N times.
constexpr int kLeafN = 7;

// Where cgroup v2 is mounted ("" when it is not), from /proc/self/mountinfo.
std::string cgroup2_root() {
  std::ifstream in("/proc/self/mountinfo");
  for (std::string line; std::getline(in, line);) {
    const size_t dash = line.find(" - cgroup2 ");
    if (dash == std::string::npos) continue;
    std::istringstream f(line.substr(0, dash));
    std::string id, parent, dev, root, mount;
    f >> id >> parent >> dev >> root >> mount;
    if (root == "/") return mount;
  }
  return "";
}

// A cgroup made for the test under the cgroup v2 root, removed at the end
// (its processes have exited by then).
class TestCgroup {
 public:
  explicit TestCgroup(const std::string& name) : name_(name) {
    const std::string root = cgroup2_root();
    if (root.empty()) return;
    path_ = root + "/" + name;
    ok_ = fs::create_directory(path_) || fs::is_directory(path_);
  }
  ~TestCgroup() {
    if (path_.empty()) return;
    for (int i = 0; i < 100 && ::rmdir(path_.c_str()) != 0 && errno == EBUSY; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  bool ok() const { return ok_; }
  const std::string& name() const { return name_; }
  const std::string& path() const { return path_; }
  // Moves a running process in, as systemd does with a service's.
  bool move_in(pid_t pid) const {
    std::ofstream procs(path_ + "/cgroup.procs");
    procs << pid << std::flush;
    return static_cast<bool>(procs);
  }

 private:
  std::string name_, path_;
  bool ok_ = false;
};

class MultiProcess : public IntegrationTest {
 protected:
  Child dlopen_target(int first, int second, const std::string& go) {
    return Child({Paths::target_dlopen, std::to_string(first), std::to_string(second),
                  "--wait=" + go, tag_arg()});
  }
  // Until the trace file has its name: the probes are in (output_file.h).
  bool wait_attached(const std::string& out, Child& atrace) {
    auto deadline = std::chrono::steady_clock::now() + scaled(milliseconds(20000));
    while (!fs::exists(out) && atrace.running() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(milliseconds(20));
    return fs::exists(out);
  }
  long long calls_in(const std::string& out, pid_t pid) {
    auto rep = report_json(out, {"--pid=" + std::to_string(pid)});
    return rep ? calls_of(*rep, "plugin_fn") : -2;
  }
};

TEST_F(MultiProcess, PidListExactCountsPerProcess) {
  const std::string go = file("go");
  Child a = dlopen_target(kFirstA, kSecondA, go);
  Child b = dlopen_target(kFirstB, kSecondB, go);
  ASSERT_TRUE(a.wait_for_line("ready", milliseconds(10000))) << a.out();
  ASSERT_TRUE(b.wait_for_line("ready", milliseconds(10000))) << b.out();
  const std::string out = file("pids.data");
  Child atrace({Paths::atrace, "record", "-p",
                std::to_string(a.pid()) + "," + std::to_string(b.pid()),
                "--select=libtarget_plugin.so*:plugin_fn", "-o", out});
  ASSERT_TRUE(wait_attached(out, atrace)) << atrace.wait(milliseconds(1000)).describe();
  std::ofstream(go).put('1');
  Result ea = a.wait(milliseconds(30000)), eb = b.wait(milliseconds(30000));
  ASSERT_TRUE(ea.exited(0)) << ea.describe();
  ASSERT_TRUE(eb.exited(0)) << eb.describe();
  // It ends by itself once both have exited.
  Result r = atrace.wait(milliseconds(30000));
  ASSERT_TRUE(r.exited(0)) << r.describe();
  const std::string said = "atrace: tracing 2 processes: " + std::to_string(a.pid()) +
                           " (target_dlopen), " + std::to_string(b.pid()) + " (target_dlopen)";
  EXPECT_NE(r.err.find(said), std::string::npos) << r.err;
  // One file both map: one probe.
  EXPECT_NE(r.err.find("from 1 probes"), std::string::npos) << r.err;
  EXPECT_EQ(calls_in(out, a.pid()), kFirstA + kSecondA);
  EXPECT_EQ(calls_in(out, b.pid()), kFirstB + kSecondB);
  auto all = report_json(out);
  ASSERT_TRUE(all);
  EXPECT_EQ(calls_of(*all, "plugin_fn"), kFirstA + kSecondA + kFirstB + kSecondB);
  EXPECT_EQ((*all)["lost_events"], 0);
  expect_no_uprobe_events_left();
}

// One process in a mount namespace of its own (seeing the same files):
// its modules are read through its root, and a file both map is still one
// module, one probe; the probing line names its namespace.
TEST_F(MultiProcess, PidListAcrossMountNamespacesSharesOneProbe) {
  const std::string go = file("go");
  Child a = dlopen_target(kFirstA, kSecondA, go);
  Child b({"unshare", "--mount", "--propagation", "private", "--", Paths::target_dlopen,
           std::to_string(kFirstB), std::to_string(kSecondB), "--wait=" + go, tag_arg()});
  ASSERT_TRUE(a.wait_for_line("ready", milliseconds(10000))) << a.out();
  auto b_pid = b.wait_for_line("pid=", milliseconds(10000));
  ASSERT_TRUE(b_pid && b.wait_for_line("ready", milliseconds(10000))) << b.out();
  const std::string pid_b = b_pid->substr(4);
  const std::string out = file("ns.data");
  Child atrace({Paths::atrace, "record", "-p", std::to_string(a.pid()) + "," + pid_b,
                "--select=libtarget_plugin.so*:plugin_fn", "-o", out});
  ASSERT_TRUE(wait_attached(out, atrace)) << atrace.wait(milliseconds(1000)).describe();
  std::ofstream(go).put('1');
  Result ea = a.wait(milliseconds(30000)), eb = b.wait(milliseconds(30000));
  ASSERT_TRUE(ea.exited(0)) << ea.describe();
  ASSERT_TRUE(eb.exited(0)) << eb.describe();
  Result r = atrace.wait(milliseconds(30000));
  ASSERT_TRUE(r.exited(0)) << r.describe();
  EXPECT_NE(r.err.find(pid_b + " (target_dlopen; mount namespace mnt:["), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("from 1 probes"), std::string::npos) << r.err;
  EXPECT_EQ(calls_in(out, a.pid()), kFirstA + kSecondA);
  EXPECT_EQ(calls_in(out, std::stoi(pid_b)), kFirstB + kSecondB);
  expect_no_uprobe_events_left();
}

// A service's cgroup: the process in it at the start, one started in it
// later (moved in, then exec'd, as systemd and container runtimes start
// theirs), and another program started there later whose file a selector
// names by path, are traced, exactly; the same programs outside it are not.
TEST_F(MultiProcess, CgroupTracesItsProcessesAndThoseStartedLater) {
  TestCgroup cg("atrace-test-" + std::to_string(getpid()));
  ASSERT_TRUE(cg.ok()) << "cannot make a cgroup under the cgroup v2 root '" << cgroup2_root()
                       << "'";
  const std::string go = file("go");
  Child a = dlopen_target(kFirstA, kSecondA, go);
  ASSERT_TRUE(a.wait_for_line("ready", milliseconds(10000))) << a.out();
  ASSERT_TRUE(cg.move_in(a.pid()));
  Child outside = dlopen_target(kOther, kOther, go);
  ASSERT_TRUE(outside.wait_for_line("ready", milliseconds(10000))) << outside.out();

  const std::string out = file("cgroup.data");
  // target_c, by path: no process runs it yet, its probe waits for it.
  Child atrace({Paths::atrace, "record", "--cgroup=" + cg.name(),
                "--select=libtarget_plugin.so*:plugin_fn," + std::string(Paths::target_c) + ":leaf",
                "-o", out});
  ASSERT_TRUE(wait_attached(out, atrace)) << atrace.wait(milliseconds(1000)).describe();
  // Started in the cgroup now: a shell moves itself in, then execs.
  Child b({"/bin/sh", "-c", "echo $$ > " + cg.path() + "/cgroup.procs && exec \"$0\" \"$@\"",
           Paths::target_dlopen, std::to_string(kFirstB), std::to_string(kSecondB), "--wait=" + go,
           tag_arg()});
  ASSERT_TRUE(b.wait_for_line("ready", milliseconds(10000))) << b.out();
  // Another program started there, and the same one outside.
  Child c({"/bin/sh", "-c", "echo $$ > " + cg.path() + "/cgroup.procs && exec \"$0\" \"$@\"",
           Paths::target_c, std::to_string(kLeafN), tag_arg()});
  Result ec = c.wait(milliseconds(30000));
  ASSERT_TRUE(ec.exited(0)) << ec.describe();
  Result eo = run({Paths::target_c, std::to_string(kOther), tag_arg()});
  ASSERT_TRUE(eo.exited(0)) << eo.describe();
  std::ofstream(go).put('1');
  for (Child* child : {&a, &b, &outside}) {
    Result e = child->wait(milliseconds(30000));
    ASSERT_TRUE(e.exited(0)) << e.describe();
  }
  Result r = atrace.wait(milliseconds(30000));  // none left in the cgroup
  ASSERT_TRUE(r.exited(0)) << r.describe();
  EXPECT_NE(r.err.find("atrace: tracing cgroup /" + cg.name() +
                       " and the processes started in it: 1 process now: " +
                       std::to_string(a.pid()) + " (target_dlopen)"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(calls_in(out, a.pid()), kFirstA + kSecondA);
  EXPECT_EQ(calls_in(out, b.pid()), kFirstB + kSecondB);
  auto in_c = report_json(out, {"--pid=" + std::to_string(c.pid())});
  ASSERT_TRUE(in_c);
  EXPECT_EQ(calls_of(*in_c, "leaf"), 3 * kLeafN);
  auto all = report_json(out);
  ASSERT_TRUE(all);
  EXPECT_EQ(calls_of(*all, "plugin_fn"), kFirstA + kSecondA + kFirstB + kSecondB)
      << "the process outside the cgroup was traced";
  EXPECT_EQ(calls_of(*all, "leaf"), 3 * kLeafN) << "target_c outside the cgroup was traced";
  expect_no_uprobe_events_left();
}

// A program started in the cgroup later is probed where its files are
// the ones probed at the start (probes are per file): the same program is,
// a copy of it (same path elsewhere, another file) is not, and atrace says
// so, naming the copy.
TEST_F(MultiProcess, CgroupSaysWhichFilesOfALateProcessAreNotProbed) {
  TestCgroup cg("atrace-copy-" + std::to_string(getpid()));
  ASSERT_TRUE(cg.ok());
  const std::string go = file("go"), copy = file("target_dlopen");
  fs::copy_file(Paths::target_dlopen, copy);
  fs::permissions(copy, fs::perms::owner_all);
  Child a = dlopen_target(kFirstA, kSecondA, go);
  ASSERT_TRUE(a.wait_for_line("ready", milliseconds(10000))) << a.out();
  ASSERT_TRUE(cg.move_in(a.pid()));
  const std::string out = file("copy.data");
  // main: `a` is in it already; each process started later enters it once.
  Child atrace({Paths::atrace, "record", "--cgroup=" + cg.path(), "--select=main", "-o", out});
  ASSERT_TRUE(wait_attached(out, atrace)) << atrace.wait(milliseconds(1000)).describe();
  const std::string move_in = "echo $$ > " + cg.path() + "/cgroup.procs && exec \"$0\" \"$@\"";
  Child same({"/bin/sh", "-c", move_in, Paths::target_dlopen, "1", "1", "--wait=" + go, tag_arg()});
  Child other({"/bin/sh", "-c", move_in, copy, "1", "1", "--wait=" + go, tag_arg()});
  ASSERT_TRUE(same.wait_for_line("ready", milliseconds(10000))) << same.out();
  ASSERT_TRUE(other.wait_for_line("ready", milliseconds(10000))) << other.out();
  // The recorder looks for new processes at its wake-ups: give it one.
  std::this_thread::sleep_for(milliseconds(500));
  std::ofstream(go).put('1');
  for (Child* c : {&a, &same, &other}) {
    Result e = c->wait(milliseconds(30000));
    ASSERT_TRUE(e.exited(0)) << e.describe();
  }
  Result r = atrace.wait(milliseconds(30000));
  ASSERT_TRUE(r.exited(0)) << r.describe();
  EXPECT_NE(
      r.err.find("atrace: process " + std::to_string(other.pid()) +
                 " (target_dlopen) started in the cgroup: traced, but " + copy + " not probed"),
      std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("atrace: process " + std::to_string(same.pid())), std::string::npos)
      << r.err;
  auto in_same = report_json(out, {"--pid=" + std::to_string(same.pid())});
  ASSERT_TRUE(in_same);
  EXPECT_EQ(calls_of(*in_same, "main"), 1);
  auto all = report_json(out);
  ASSERT_TRUE(all);
  EXPECT_EQ(calls_of(*all, "main"), 1);
  expect_no_uprobe_events_left();
}

TEST_F(MultiProcess, BadPidListOneLine) {
  Result r = run({Paths::atrace, "record", "-p", "1,abc", "--select=main"});
  EXPECT_TRUE(r.exited(2)) << r.describe();
  EXPECT_EQ(expect_one_error_line(r),
            "atrace: -p: 'abc' is not a process id (-p PID or -p PID,PID,...)");
}

TEST_F(MultiProcess, MissingCgroupOneLine) {
  const std::string out = file("none.data");
  Result r =
      run({Paths::atrace, "record", "--cgroup=atrace-no-such-cgroup", "--select=main", "-o", out});
  EXPECT_NE(expect_one_error_line(r).find("--cgroup=atrace-no-such-cgroup: no such cgroup"),
            std::string::npos);
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(MultiProcess, NotACgroupV2OneLine) {
  Result r = run({Paths::atrace, "record", "--cgroup=" + tmp_->file(""), "--select=main"});
  EXPECT_NE(expect_one_error_line(r).find("is not a cgroup v2 directory"), std::string::npos);
}

TEST_F(MultiProcess, EmptyCgroupOneLine) {
  TestCgroup cg("atrace-empty-" + std::to_string(getpid()));
  ASSERT_TRUE(cg.ok());
  Result r = run({Paths::atrace, "record", "--cgroup=" + cg.path(), "--select=main"});
  EXPECT_NE(expect_one_error_line(r).find(": no process in " + cg.path()), std::string::npos);
}

// A process that is gone by the time atrace attaches (a zombie: exited,
// not yet reaped, so its pid cannot be reused meanwhile): one line, no
// file; beside a live one, a warning and the live one is recorded.
TEST_F(MultiProcess, ProcessExitedWhileAttaching) {
  const pid_t zombie = fork();
  ASSERT_GE(zombie, 0);
  if (zombie == 0) _exit(0);
  std::this_thread::sleep_for(milliseconds(200));
  const std::string out = file("gone.data");
  Result r =
      run({Paths::atrace, "record", "-p", std::to_string(zombie), "--kernel=sched", "-o", out});
  EXPECT_EQ(expect_one_error_line(r), "atrace: process " + std::to_string(zombie) +
                                          " exited while atrace attached: nothing to record");
  EXPECT_FALSE(fs::exists(out));

  const std::string go = file("go");
  Child a = dlopen_target(kFirstA, kSecondA, go);  // waits meanwhile
  ASSERT_TRUE(a.wait_for_line("ready", milliseconds(10000))) << a.out();
  Result both =
      run({Paths::atrace, "record", "-p", std::to_string(a.pid()) + "," + std::to_string(zombie),
           "--kernel=proc", "--duration=0.5", "-o", out});
  EXPECT_TRUE(both.exited(0)) << both.describe();
  EXPECT_NE(both.err.find("atrace: process " + std::to_string(zombie) +
                          " exited while atrace attached\n"),
            std::string::npos)
      << both.err;
  std::ofstream(go).put('1');
  Result ea = a.wait(milliseconds(30000));
  EXPECT_TRUE(ea.exited(0)) << ea.describe();
  int status = 0;
  waitpid(zombie, &status, 0);
  expect_no_uprobe_events_left();
}

}  // namespace
}  // namespace atrace::it
