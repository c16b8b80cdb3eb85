// What the user knows a traced process by (issue 30): a process in a
// private pid + mount namespace is shown with the pid it has there (its
// NSpid) next to the host's, a process in a cgroup with that cgroup's path
// and the service it names, in report text and JSON, script and the
// exporters; --pid takes either pid. Real BPF, real namespaces, a real
// cgroup made by the test.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/integration/fixture.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

// The cgroup v2 hierarchy's mount point: /sys/fs/cgroup on a pure v2
// system, /sys/fs/cgroup/unified on a hybrid one; "" when there is none.
std::string cgroup2_root() {
  std::ifstream in("/proc/self/mountinfo");
  for (std::string line; std::getline(in, line);) {
    // "... MOUNTPOINT OPTIONS ... - cgroup2 cgroup2 rw"
    const size_t dash = line.find(" - ");
    if (dash == std::string::npos || line.compare(dash + 3, 8, "cgroup2 ") != 0) continue;
    std::istringstream words(line.substr(0, dash));
    std::string w, mount;
    for (int i = 0; i < 5 && words >> w; ++i)
      if (i == 4) mount = w;
    return mount;
  }
  return "";
}

// A cgroup of its own under the v2 root, removed at the end (its processes
// must have exited or been moved out by then).
class TestCgroup {
 public:
  explicit TestCgroup(const std::string& name) {
    const std::string root = cgroup2_root();
    if (root.empty()) return;
    dir_ = root + "/" + name;
    rel_ = "/" + name;
    if (::mkdir(dir_.c_str(), 0755) != 0) dir_.clear();
  }
  ~TestCgroup() {
    if (dir_.empty()) return;
    // A process that lingers as a zombie still counts: give it a moment.
    for (int i = 0; i < 50 && ::rmdir(dir_.c_str()) != 0; ++i)
      std::this_thread::sleep_for(milliseconds(100));
  }
  bool ok() const { return !dir_.empty(); }
  // Its path as /proc/PID/cgroup shows it.
  const std::string& path() const { return rel_; }
  bool add(pid_t pid) const {
    std::ofstream procs(dir_ + "/cgroup.procs");
    procs << pid << std::flush;
    return static_cast<bool>(procs);
  }

 private:
  std::string dir_, rel_;
};

// The first child of `pid`, as /proc says: the process `unshare --fork`
// started in the new namespaces.
pid_t first_child(pid_t pid) {
  const std::string p =
      "/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children";
  for (int i = 0; i < 100; ++i) {
    std::ifstream in(p);
    pid_t child = 0;
    if (in >> child && child > 0) return child;
    std::this_thread::sleep_for(milliseconds(20));
  }
  return 0;
}

std::string ns_link(pid_t pid, const char* ns) {
  struct stat st;
  const std::string p = "/proc/" + std::to_string(pid) + "/ns/" + ns;
  return ::stat(p.c_str(), &st) == 0 ? std::to_string(st.st_ino) : "";
}

// The row of process `pid` in the JSON report's process table.
const nlohmann::json* process_row(const nlohmann::json& report, pid_t pid) {
  for (const auto& p : report["processes"])
    if (p["pid"] == pid) return &p;
  return nullptr;
}

class ProcessTable : public IntegrationTest {
 protected:
  // target_threads --forever in a private pid and mount namespace: its
  // host pid (0 when it did not come up).
  pid_t start_in_namespace(std::unique_ptr<Child>& ns) {
    ns = std::make_unique<Child>(
        std::vector<std::string>{"unshare", "--mount", "--pid", "--fork", "--propagation",
                                 "private", Paths::target_threads, "--forever", "30", tag_arg()});
    if (!ns->wait_for_line("ready", milliseconds(10000))) return 0;
    // It says the pid it sees: its namespace's first.
    EXPECT_EQ(printed_value(ns->out(), "pid"), std::optional<std::string>("1")) << ns->out();
    return first_child(ns->pid());
  }
  // Records tick() of `pid` for a second.
  void record_tick(pid_t pid, const std::string& out) {
    Result r = run({Paths::atrace, "record", "-p", std::to_string(pid), "--select=tick",
                    "--duration=1", "-o", out},
                   milliseconds(30000));
    ASSERT_TRUE(r.exited(0)) << r.describe();
  }
};

TEST_F(ProcessTable, PidNamespaceShownAndFilteredByEitherPid) {
  std::unique_ptr<Child> ns;
  const pid_t host = start_in_namespace(ns);
  ASSERT_GT(host, 1) << "the namespaced target did not come up\n" << (ns ? ns->out() : "");
  const std::string its_pid_ns = ns_link(host, "pid"), its_mnt_ns = ns_link(host, "mnt");
  ASSERT_NE(its_pid_ns, ns_link(getpid(), "pid"));
  const std::string out = file("ns.data");
  record_tick(host, out);
  ::kill(host, SIGTERM);
  Result end = ns->wait(milliseconds(10000));
  ASSERT_TRUE(end.exited(0)) << end.describe();

  auto rep = report_json(out);
  ASSERT_TRUE(rep);
  const long long ticks = calls_of(*rep, "tick");
  EXPECT_GT(ticks, 0);
  const nlohmann::json* row = process_row(*rep, host);
  ASSERT_NE(row, nullptr) << rep->dump(2);
  EXPECT_EQ((*row)["ns_pid"], 1);
  // Its own namespaces, as their links say.
  EXPECT_EQ((*row)["pid_ns"].dump(), its_pid_ns);
  EXPECT_EQ((*row)["mnt_ns"].dump(), its_mnt_ns);
  EXPECT_NE(its_mnt_ns, ns_link(getpid(), "mnt"));
  for (const auto& t : (*rep)["threads"]) {
    EXPECT_EQ(t["pid"], host);
    EXPECT_EQ(t["ns_pid"], 1);
  }

  // --pid: the host's pid or the namespace's, the same calls.
  for (const std::string& pid : {std::to_string(host), std::string("1")}) {
    auto only = report_json(out, {"--pid=" + pid});
    ASSERT_TRUE(only);
    EXPECT_EQ(calls_of(*only, "tick"), ticks) << "--pid=" << pid;
  }
  Result other = run({Paths::atrace, "report", "-i", out, "--pid=2"});
  EXPECT_EQ(other.exit_code, 2) << other.describe();
  EXPECT_NE(other.err.find("--pid=2: no such process in the trace"), std::string::npos)
      << other.describe();

  const std::string said = "pid " + std::to_string(host) + " (1 in its namespace)";
  Result text = run({Paths::atrace, "report", "-i", out});
  ASSERT_TRUE(text.exited(0)) << text.describe();
  EXPECT_NE(text.out.find("\n  " + said), std::string::npos) << text.out;
  Result threads = run({Paths::atrace, "report", "-i", out, "--threads"});
  ASSERT_TRUE(threads.exited(0)) << threads.describe();
  EXPECT_NE(threads.out.find("Thread " + std::to_string(host) + " (target_threads) of " + said),
            std::string::npos)
      << threads.out;

  Result script = run({Paths::atrace, "script", "-i", out});
  ASSERT_TRUE(script.exited(0)) << script.describe();
  EXPECT_EQ(script.out.rfind("# " + said, 0), 0u) << script.out.substr(0, 400);

  Result info = run({Paths::atrace, "info", "-i", out});
  ASSERT_TRUE(info.exited(0)) << info.describe();
  EXPECT_NE(info.out.find("\nProcesses: 1\n"), std::string::npos) << info.out;

  const std::string chrome = file("ns.json");
  Result conv = run({Paths::atrace, "convert", "-i", out, "--to=chrome", "-o", chrome});
  ASSERT_TRUE(conv.exited(0)) << conv.describe();
  std::ifstream in(chrome);
  const std::string json((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(json.find("\"name\":\"target_threads pid 1\""), std::string::npos)
      << json.substr(0, 600);
}

// --follow-forks into a namespace: the child unshare starts there is
// noted when its events arrive (no one attached to it by pid), with its
// namespace pid; --pid=1 is its calls, exactly.
TEST_F(ProcessTable, FollowedChildInANamespace) {
  const std::string sh = file("ns.sh");
  {
    std::ofstream s(sh);
    s << "#!/bin/sh\nunshare --mount --pid --fork --propagation private " << Paths::target_c
      << " 3 " << tag_arg() << "\necho done\n";
  }
  ASSERT_EQ(::chmod(sh.c_str(), 0755), 0);
  const std::string out = file("follow.data");
  Result r = record(out, "middle,leaf", {sh}, {"--follow-forks"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  ASSERT_NE(r.out.find("done"), std::string::npos) << r.describe();

  auto rep = report_json(out);
  ASSERT_TRUE(rep);
  int in_namespace = 0;
  for (const auto& p : (*rep)["processes"]) in_namespace += p["ns_pid"] == 1;
  EXPECT_EQ(in_namespace, 1) << (*rep)["processes"].dump(2);
  auto only = report_json(out, {"--pid=1"});
  ASSERT_TRUE(only);
  EXPECT_EQ(calls_of(*only, "middle"), 3);
  EXPECT_EQ(calls_of(*only, "leaf"), 9);
  for (const auto& t : (*only)["threads"]) EXPECT_EQ(t["ns_pid"], 1);
}

// A process in a root of its own (unshare --root: a chroot in private
// mount and pid namespaces, the podman tests' root) whose library only
// that root has: once it is gone, report names its stack frames from the
// root its table entry kept, the library's path being absent on the host.
TEST_F(ProcessTable, StackFramesFromItsRootAfterItIsGone) {
  const std::string rootfs = PODMAN_ROOTFS_DIR;
  ASSERT_TRUE(std::filesystem::exists(rootfs + "/opt/app/target_podman")) << rootfs;
  ASSERT_FALSE(std::filesystem::exists("/opt/app/libcont.so"));
  Child ns({"unshare", "--mount", "--pid", "--fork", "--propagation", "private", "--root=" + rootfs,
            "/opt/app/target_podman", "5", "--rounds=1", tag_arg()});
  ASSERT_TRUE(ns.wait_for_line("ready=1", milliseconds(10000))) << ns.out();
  const pid_t host = first_child(ns.pid());
  ASSERT_GT(host, 1);
  const std::string out = file("root.data");
  Child atrace({Paths::atrace, "record", "-p", std::to_string(host), "--select=libcont.so:*",
                "--stack=libcont.so:*", "--filter=off", "-o", out});
  // The file appears once the probes are in: then the one round of calls.
  const auto deadline = std::chrono::steady_clock::now() + scaled(milliseconds(30000));
  while (!std::filesystem::exists(out) && atrace.running() &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(milliseconds(20));
  ASSERT_TRUE(std::filesystem::exists(out)) << atrace.wait(milliseconds(1000)).describe();
  ::kill(host, SIGUSR1);
  Result end = ns.wait(milliseconds(30000));
  ASSERT_TRUE(end.exited(0)) << end.describe();
  Result r = atrace.wait(milliseconds(30000));  // ends with its target
  ASSERT_TRUE(r.exited(0)) << r.describe();

  auto rep = report_json(out);
  ASSERT_TRUE(rep);
  EXPECT_EQ(calls_of(*rep, "cont_work"), 5);
  const nlohmann::json* row = process_row(*rep, host);
  ASSERT_NE(row, nullptr) << rep->dump(2);
  EXPECT_EQ((*row)["ns_pid"], 1);
  EXPECT_EQ((*row)["root"], std::filesystem::canonical(rootfs).string());

  Result script = run({Paths::atrace, "script", "-i", out});
  ASSERT_TRUE(script.exited(0)) << script.describe();
  size_t named = 0;
  for (size_t at = 0; (at = script.out.find("cont_work+0x0 (libcont.so)", at)) != std::string::npos;
       ++at)
    ++named;
  EXPECT_EQ(named, 5u) << script.out.substr(0, 1500);
}

// A systemd-style cgroup made by the test: the process moved into it is
// shown with the cgroup's path and the service it names.
TEST_F(ProcessTable, CgroupShown) {
  const std::string name = tag_ + ".service";
  TestCgroup cg(name);
  if (!cg.ok()) {
    if (in_ci()) FAIL() << "CI=true and no cgroup v2 hierarchy to make a cgroup in";
    GTEST_SKIP() << "no cgroup v2 hierarchy to make a cgroup in";
  }
  ForeverTarget target(tag_, 30);
  ASSERT_TRUE(target.ok()) << target.startup_output();
  ASSERT_TRUE(cg.add(target.pid()));
  const std::string out = file("cgroup.data");
  record_tick(target.pid(), out);
  // The same process, selected by its cgroup: the same table entry.
  const std::string by_cgroup = file("by-cgroup.data");
  Result r = run({Paths::atrace, "record", "--cgroup=" + name, "--select=tick", "--duration=1",
                  "-o", by_cgroup},
                 milliseconds(30000));
  ASSERT_TRUE(r.exited(0)) << r.describe();
  Result end = target.stop();
  ASSERT_TRUE(end.exited(0)) << end.describe();
  auto rep_cg = report_json(by_cgroup);
  ASSERT_TRUE(rep_cg);
  const nlohmann::json* row_cg = process_row(*rep_cg, target.pid());
  ASSERT_NE(row_cg, nullptr) << rep_cg->dump(2);
  EXPECT_EQ((*row_cg)["cgroup"], cg.path());
  EXPECT_EQ((*row_cg)["container"], name);

  auto rep = report_json(out);
  ASSERT_TRUE(rep);
  EXPECT_GT(calls_of(*rep, "tick"), 0);
  const nlohmann::json* row = process_row(*rep, target.pid());
  ASSERT_NE(row, nullptr) << rep->dump(2);
  EXPECT_EQ((*row)["cgroup"], cg.path());
  EXPECT_EQ((*row)["container"], name);
  EXPECT_EQ((*row)["ns_pid"], target.pid());  // the host's own namespace
  for (const auto& t : (*rep)["threads"]) EXPECT_EQ(t["container"], name);

  Result text = run({Paths::atrace, "report", "-i", out});
  ASSERT_TRUE(text.exited(0)) << text.describe();
  EXPECT_NE(text.out.find("\n  pid " + std::to_string(target.pid()) + ", cgroup " + cg.path() +
                          ", service " + name + "\n"),
            std::string::npos)
      << text.out;
  Result script = run({Paths::atrace, "script", "-i", out});
  ASSERT_TRUE(script.exited(0)) << script.describe();
  EXPECT_EQ(script.out.rfind("# pid " + std::to_string(target.pid()) + ", cgroup " + cg.path(), 0),
            0u)
      << script.out.substr(0, 400);
}

}  // namespace
}  // namespace atrace::it
