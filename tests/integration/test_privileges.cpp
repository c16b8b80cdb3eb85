// atrace with capabilities instead of root (base/capabilities.h,
// docs/privileges.md): run by `nobody` through setpriv with CAP_BPF and
// CAP_PERFMON in its ambient set, it records a target it launched with
// exact counts and a root process it attaches to when it also has
// CAP_SYS_PTRACE; without CAP_PERFMON it says so in one line and touches
// nothing. (Run as root, the other suites show root still works.)
#include <grp.h>
#include <pwd.h>
#include <sys/capability.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>

#include "tests/integration/fixture.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

namespace fs = std::filesystem;

// A directory `nobody` can reach wherever the build and $TMPDIR are (CI's
// TMPDIR is 0700, a checkout under /root or a 0700 home too): a copy of
// atrace, of the targets and of the library target_usdt finds next to it
// ($ORIGIN), and "out", nobody's.
class NobodyDir {
 public:
  NobodyDir() {
    std::string tmpl = "/tmp/atrace-privileges.XXXXXX";
    if (!::mkdtemp(tmpl.data())) return;
    path_ = tmpl;
    const passwd* pw = ::getpwnam("nobody");
    const group* gr = ::getgrnam("nogroup");
    if (!pw || !gr) return;
    fs::permissions(path_, fs::perms(0755));
    const std::string usdt_lib =
        (fs::path(Paths::target_usdt).parent_path() / "libtarget_usdt_lib.so").string();
    for (const char* bin : {Paths::atrace, Paths::target_c, Paths::target_threads,
                            Paths::target_usdt, usdt_lib.c_str()}) {
      const fs::path to = path_ / fs::path(bin).filename();
      fs::copy_file(bin, to);
      fs::permissions(to, fs::perms(0755));
    }
    fs::create_directory(out());
    ok_ = ::chown(out().c_str(), pw->pw_uid, gr->gr_gid) == 0;
    uid_ = pw->pw_uid;
  }
  ~NobodyDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  bool ok() const { return ok_; }
  uid_t uid() const { return uid_; }
  std::string bin(const char* build_path) const {
    return (path_ / fs::path(build_path).filename()).string();
  }
  fs::path out() const { return path_ / "out"; }

 private:
  fs::path path_;
  bool ok_ = false;
  uid_t uid_ = 0;
};

// `cmd` run as nobody:nogroup with only `caps` ("+bpf,+perfmon"), kept
// across the exec through the ambient set.
std::vector<std::string> as_nobody(const std::string& caps, const std::vector<std::string>& cmd) {
  std::vector<std::string> v = {"setpriv",
                                "--reuid=nobody",
                                "--regid=nogroup",
                                "--clear-groups",
                                "--inh-caps=-all" + (caps.empty() ? "" : "," + caps),
                                "--ambient-caps=-all" + (caps.empty() ? "" : "," + caps),
                                "--"};
  v.insert(v.end(), cmd.begin(), cmd.end());
  return v;
}

class Privileges : public IntegrationTest {
 protected:
  void SetUp() override {
    IntegrationTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_TRUE(run({"setpriv", "--version"}).exited(0)) << "setpriv (util-linux) is needed";
    ASSERT_TRUE(dir_.ok()) << "cannot prepare a directory for nobody under /tmp";
  }
  NobodyDir dir_;
};

// -V without any capability: what needs a test load is said to be
// unknown, what atrace reads from files is known.
TEST_F(Privileges, VersionWithoutCapabilitiesSaysWhatIsUnknown) {
  Result r = run(as_nobody("", {dir_.bin(Paths::atrace), "-V"}));
  ASSERT_TRUE(r.exited(0)) << r.describe();
  EXPECT_EQ(r.out.rfind("atrace ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("  BTF (required): yes\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  BPF ring buffer (required): unknown without CAP_BPF and CAP_PERFMON "
                       "(or root) -- if not, cannot record\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  sleepable uprobes: unknown without"), std::string::npos) << r.out;
}

TEST_F(Privileges, CapBpfAndPerfmonRecordALaunchedTargetWithExactCounts) {
  const std::string out = (dir_.out() / "caps.data").string();
  Result r =
      run(as_nobody("+bpf,+perfmon", {dir_.bin(Paths::atrace), "record", "-o", out,
                                      "--select=leaf,middle,outer", "--filter-min-calls=1000", "--",
                                      dir_.bin(Paths::target_c), "100", tag_arg()}));
  ASSERT_TRUE(r.exited(0)) << r.describe();
  EXPECT_EQ(printed_count(r.out, "leaf").value_or(-1), 300) << r.describe();
  struct stat st {};
  ASSERT_EQ(::stat(out.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, dir_.uid()) << "the trace is nobody's";
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto rep = report_json(out);
  ASSERT_TRUE(rep);
  EXPECT_EQ((*rep)["lost_events"], 0);
  EXPECT_EQ(calls_of(*rep, "leaf"), 300);
  EXPECT_EQ(calls_of(*rep, "middle"), 100);
  EXPECT_EQ(calls_of(*rep, "outer"), 1);
}

// USDT probes on uprobe_multi links need no more than the two capabilities
// (libbpf's perf-event links for USDT were refused without CAP_SYS_ADMIN):
// exact counts, string arguments, a library's probe and an interval.
TEST_F(Privileges, CapBpfAndPerfmonRecordUsdtProbesWithExactCounts) {
  const std::string out = (dir_.out() / "usdt.data").string();
  Result r = run(
      as_nobody("+bpf,+perfmon",
                {dir_.bin(Paths::atrace), "record", "-o", out, "--no-kernel",
                 "--usdt=app:tick,app:request(str,int),libtarget_usdt_lib.so:libp:hit,app:phase__*",
                 "--", dir_.bin(Paths::target_usdt), "100", tag_arg()}));
  ASSERT_TRUE(r.exited(0)) << r.describe();
  auto rep = report_json(out);
  ASSERT_TRUE(rep);
  EXPECT_EQ((*rep)["lost_events"], 0);
  EXPECT_EQ(calls_of(*rep, "app:phase"), 3);
  std::map<std::string, long long> hits;
  for (const auto& p : (*rep)["probes"])
    hits[p["provider"].get<std::string>() + ":" + p["name"].get<std::string>()] = p["count"];
  EXPECT_EQ(hits["app:tick"], 100);
  EXPECT_EQ(hits["app:request"], 100);
  EXPECT_EQ(hits["libp:hit"], 11);
  ASSERT_EQ((*rep)["probes"].size(), 3u) << rep->dump(1);
}

// The way to install it for users: `setcap cap_bpf,cap_perfmon=ep atrace`.
// The launched target gets none of them (docs/privileges.md).
TEST_F(Privileges, FileCapabilitiesRecordALaunchedTargetWithExactCounts) {
  const std::string atrace = dir_.bin(Paths::atrace);
  cap_t caps = cap_from_text("cap_bpf,cap_perfmon=ep");
  ASSERT_NE(caps, nullptr);
  const int set = cap_set_file(atrace.c_str(), caps);
  cap_free(caps);
  ASSERT_EQ(set, 0) << "cannot give " << atrace << " file capabilities: " << strerror(errno);
  const std::string out = (dir_.out() / "filecaps.data").string();
  Result r = run(as_nobody(
      "", {atrace, "record", "-o", out, "--select=leaf,middle,outer", "--filter-min-calls=1000",
           "--", dir_.bin(Paths::target_c), "100", tag_arg()}));
  ASSERT_TRUE(r.exited(0)) << r.describe();
  auto rep = report_json(out);
  ASSERT_TRUE(rep);
  EXPECT_EQ(calls_of(*rep, "leaf"), 300);
  EXPECT_EQ(calls_of(*rep, "middle"), 100);
  EXPECT_EQ(calls_of(*rep, "outer"), 1);
  const std::string out2 = (dir_.out() / "grep.data").string();
  Result target_caps = run(as_nobody(
      "", {atrace, "record", "-o", out2, "--", "/bin/grep", "CapEff", "/proc/self/status"}));
  ASSERT_TRUE(target_caps.exited(0)) << target_caps.describe();
  EXPECT_NE(target_caps.out.find("CapEff:\t0000000000000000"), std::string::npos)
      << target_caps.out;
}

TEST_F(Privileges, WithoutCapPerfmonOneLineNamesIt) {
  const std::string out = (dir_.out() / "noperfmon.data").string();
  Result r = run(as_nobody("+bpf", {dir_.bin(Paths::atrace), "record", "-o", out, "--select=leaf",
                                    "--", dir_.bin(Paths::target_c), "1", tag_arg()}));
  const std::string line = expect_one_error_line(r);
  EXPECT_NE(line.find("record needs CAP_BPF and CAP_PERFMON (or root): missing CAP_PERFMON"),
            std::string::npos)
      << line;
  EXPECT_EQ(line.find("missing CAP_BPF"), std::string::npos) << line;
  // No sysctl would have helped: the message says which one it looked at.
  EXPECT_NE(line.find("whatever kernel.perf_event_paranoid (now "), std::string::npos) << line;
  EXPECT_EQ(r.out.find("leaf="), std::string::npos) << "the command must not have run";
  EXPECT_FALSE(fs::exists(out));
  expect_no_uprobe_events_left();

  Result none = run(as_nobody("", {dir_.bin(Paths::atrace), "record", "-o", out, "--select=leaf",
                                   "--", dir_.bin(Paths::target_c), "1", tag_arg()}));
  EXPECT_NE(expect_one_error_line(none).find("missing CAP_BPF and CAP_PERFMON"), std::string::npos);
}

// A process of another user (root's here): /proc/PID/maps needs
// CAP_SYS_PTRACE; with it, the recording works.
TEST_F(Privileges, AttachingToAnotherUsersProcessNeedsCapSysPtrace) {
  Child target({dir_.bin(Paths::target_threads), "--forever", "30", tag_arg()});
  auto pid_line = target.wait_for_line("pid=", milliseconds(10000));
  ASSERT_TRUE(pid_line) << target.wait(milliseconds(1000)).describe();
  const std::string pid = pid_line->substr(4);
  const std::string out = (dir_.out() / "attach.data").string();
  auto record_cmd = [&](const std::string& caps) {
    return as_nobody(caps, {dir_.bin(Paths::atrace), "record", "-o", out, "--select=tick",
                            "--duration=1", "-p", pid});
  };
  Result denied = run(record_cmd("+bpf,+perfmon"));
  EXPECT_NE(expect_one_error_line(denied).find("CAP_SYS_PTRACE"), std::string::npos);
  EXPECT_FALSE(fs::exists(out));

  Result r = run(record_cmd("+bpf,+perfmon,+sys_ptrace"));
  ASSERT_TRUE(r.exited(0)) << r.describe();
  auto rep = report_json(out);
  ASSERT_TRUE(rep);
  // About one tick a millisecond for the second recorded.
  EXPECT_GE(calls_of(*rep, "tick"), 100) << rep->dump();
  EXPECT_TRUE(target.running()) << "the target must run on";
  target.signal(SIGTERM);
  Result t = target.wait(milliseconds(10000));
  EXPECT_TRUE(t.exited(0)) << t.describe();
  EXPECT_GE(printed_count(t.out, "tick").value_or(0), calls_of(*rep, "tick"));
  expect_no_uprobe_events_left();
}

// -p with a list: one process atrace may read (nobody's own), one it may
// not (root's): one line naming the one it may not, no file, no probe.
TEST_F(Privileges, PidListWithAProcessAtraceMayNotReadOneLine) {
  Child own(as_nobody("", {dir_.bin(Paths::target_threads), "--forever", "30", tag_arg()}));
  Child roots({dir_.bin(Paths::target_threads), "--forever", "30", tag_arg()});
  auto own_pid = own.wait_for_line("pid=", milliseconds(10000));
  auto root_pid = roots.wait_for_line("pid=", milliseconds(10000));
  ASSERT_TRUE(own_pid && root_pid) << own.out() << roots.out();
  const std::string out = (dir_.out() / "list.data").string();
  Result r = run(as_nobody("+bpf,+perfmon",
                           {dir_.bin(Paths::atrace), "record", "-o", out, "--select=tick",
                            "--duration=1", "-p", own_pid->substr(4) + "," + root_pid->substr(4)}));
  const std::string line = expect_one_error_line(r);
  EXPECT_NE(line.find("/proc/" + root_pid->substr(4) + "/"), std::string::npos) << line;
  EXPECT_NE(line.find("CAP_SYS_PTRACE"), std::string::npos) << line;
  EXPECT_FALSE(fs::exists(out));
  EXPECT_TRUE(own.running() && roots.running());
  own.signal(SIGTERM);
  roots.signal(SIGTERM);
  EXPECT_TRUE(own.wait(milliseconds(10000)).exited(0));
  EXPECT_TRUE(roots.wait(milliseconds(10000)).exited(0));
  expect_no_uprobe_events_left();
}

}  // namespace
}  // namespace atrace::it
