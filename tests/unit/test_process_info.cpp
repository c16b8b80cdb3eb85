// What the user knows a traced process by: read from /proc
// (record/process_info.h) and said the same way by every view
// (analysis/process_text.h).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <signal.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>

#include "analysis/analysis.h"
#include "output/output.h"
#include "record/process_info.h"
#include "temp_file.h"

using namespace atrace;

TEST(ProcessInfo, ContainerAndServiceNames) {
  const std::string id = "3f2a9c1b0d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8";
  EXPECT_EQ(cgroup_name("/machine.slice/libpod-" + id + ".scope"), "3f2a9c1b0d4e");
  EXPECT_EQ(cgroup_name("/machine.slice/libpod-" + id + ".scope/container"), "3f2a9c1b0d4e");
  EXPECT_EQ(cgroup_name("/libpod_parent/libpod-" + id), "3f2a9c1b0d4e");
  EXPECT_EQ(cgroup_name("/system.slice/docker-" + id + ".scope"), "3f2a9c1b0d4e");
  EXPECT_EQ(cgroup_name("/docker/" + id), "3f2a9c1b0d4e");
  EXPECT_EQ(cgroup_name("/kubepods.slice/kubepods-burstable.slice/"
                        "kubepods-burstable-pod1234.slice/cri-containerd-" +
                        id + ".scope"),
            "3f2a9c1b0d4e");
  EXPECT_EQ(cgroup_name("/system.slice/nginx.service"), "nginx.service");
  // The innermost service: a user's manager holds its own services.
  EXPECT_EQ(cgroup_name("/user.slice/user-1000.slice/user@1000.service/app.slice/foo.service"),
            "foo.service");
  EXPECT_EQ(cgroup_name("/user.slice/user-0.slice/session-3.scope"), "");
  EXPECT_EQ(cgroup_name("/"), "");
  EXPECT_EQ(cgroup_name(""), "");
  EXPECT_EQ(cgroup_name("/machine.slice/libpod-xyz.scope"), "");  // not an id
}

// This test's own process: its pid as the status file says, its cgroup as
// the "0::" line says, its namespaces as their links say.
TEST(ProcessInfo, OfThisProcess) {
  const formats::ProcessInfo p = process_info(getpid());
  EXPECT_EQ(p.pid, static_cast<uint32_t>(getpid()));
  std::ifstream status("/proc/self/status");
  std::string ns_line;
  for (std::string l; std::getline(status, l);)
    if (l.rfind("NSpid:", 0) == 0) ns_line = l;
  const std::string last = ns_line.substr(ns_line.find_last_of(" \t") + 1);
  EXPECT_EQ(p.ns_pid, std::stoul(last));
  std::ifstream cgroup("/proc/self/cgroup");
  std::string v2;
  for (std::string l; std::getline(cgroup, l);)
    if (l.rfind("0::", 0) == 0) v2 = l.substr(3);
  EXPECT_EQ(p.cgroup, v2);
  EXPECT_EQ(p.name, cgroup_name(v2));
  struct stat pid_ns, mnt_ns;
  ASSERT_EQ(::stat("/proc/self/ns/pid", &pid_ns), 0);
  ASSERT_EQ(::stat("/proc/self/ns/mnt", &mnt_ns), 0);
  EXPECT_EQ(p.pid_ns, pid_ns.st_ino);
  EXPECT_EQ(p.mnt_ns, mnt_ns.st_ino);
  EXPECT_EQ(p.root, "");  // atrace's own root: nothing to add
}

// A process in a chroot: its root is the directory atrace reaches it by,
// where report looks for its files after it is gone.
TEST(ProcessInfo, RootOfAChrootedProcess) {
  atrace::testing::TempFile dir;
  std::filesystem::create_directories(dir.path());
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const char ok = ::chroot(dir.path().c_str()) == 0 ? 'y' : 'n';
    (void)!::write(ready[1], &ok, 1);
    ::pause();
    ::_exit(0);
  }
  ::close(ready[1]);
  char ok = 0;
  (void)!::read(ready[0], &ok, 1);
  ::close(ready[0]);
  formats::ProcessInfo p;
  if (ok == 'y') p = process_info(child);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  if (ok != 'y') GTEST_SKIP() << "chroot not permitted here (needs CAP_SYS_CHROOT)";
  EXPECT_EQ(p.root, std::filesystem::canonical(dir.path()).string());
  EXPECT_EQ(p.ns_pid, static_cast<uint32_t>(child));  // same pid namespace
}

TEST(ProcessInfo, GoneProcessIsUnknownNotAnError) {
  const formats::ProcessInfo p = process_info(999999999);
  EXPECT_EQ(p.pid, 999999999u);
  EXPECT_EQ(p.ns_pid, 0u);
  EXPECT_EQ(p.pid_ns, 0u);
  EXPECT_EQ(p.cgroup, "");
}

TEST(ProcessInfo, TableCollectsEachProcessOnce) {
  ProcessTable t;
  EXPECT_TRUE(t.note(getpid()));
  EXPECT_FALSE(t.note(getpid()));
  EXPECT_FALSE(t.note(0));
  auto fresh = t.take_new();
  ASSERT_EQ(fresh.size(), 1u);
  EXPECT_EQ(fresh[0].pid, static_cast<uint32_t>(getpid()));
  EXPECT_TRUE(t.take_new().empty());
  EXPECT_EQ(t.all().size(), 1u);
}

namespace {

formats::ProcessInfo in_container() {
  formats::ProcessInfo p;
  p.pid = 14235;
  p.ns_pid = 1;
  p.cgroup = "/machine.slice/libpod-3f2a9c1b0d4e.scope";
  p.name = "3f2a9c1b0d4e";
  return p;
}

}  // namespace

TEST(ProcessText, SaysWhatTheTableKnows) {
  EXPECT_EQ(analysis::process_description(in_container()),
            "pid 14235 (1 in its namespace), cgroup /machine.slice/libpod-3f2a9c1b0d4e.scope, "
            "container 3f2a9c1b0d4e");
  EXPECT_EQ(analysis::process_tag(in_container()), " [container 3f2a9c1b0d4e] pid 1");
  formats::ProcessInfo service;
  service.pid = service.ns_pid = 5000;
  service.cgroup = "/system.slice/nginx.service";
  service.name = "nginx.service";
  EXPECT_EQ(analysis::process_description(service),
            "pid 5000, cgroup /system.slice/nginx.service, service nginx.service");
  EXPECT_EQ(analysis::process_tag(service), " [service nginx.service]");
  formats::ProcessInfo plain;
  plain.pid = plain.ns_pid = 7;
  plain.cgroup = "/";
  EXPECT_FALSE(analysis::worth_showing(plain));
  EXPECT_EQ(analysis::process_tag(plain), "");
  EXPECT_TRUE(analysis::worth_showing(service));
}

TEST(ProcessText, ExportersNameProcessesWithIt) {
  formats::TraceHeader h;
  h.target_pid = 14235;
  h.target_command = "/opt/app/prog 3";
  formats::ThreadInfo main;
  main.tid = main.pid = 14235;
  main.name = "prog";
  analysis::TraceNames names(h, {}, {main});
  EXPECT_EQ(names.process(14235), "prog");
  names.set_processes({in_container()});
  EXPECT_EQ(names.process(14235), "prog [container 3f2a9c1b0d4e] pid 1");
  EXPECT_EQ(names.process(99), "pid 99");
}

TEST(ProcessText, ScriptPreambleAndForks) {
  formats::TraceHeader h;
  formats::ThreadInfo main, other;
  main.tid = main.pid = 14235;
  other.tid = 14236;
  other.pid = 14236;
  analysis::ScriptFormatter f(h, {}, {main, other});
  EXPECT_EQ(f.preamble(), "");
  formats::ProcessInfo child = in_container();
  child.pid = 14236;
  child.ns_pid = 2;
  formats::ProcessInfo untraced = in_container();  // no thread in the trace (or filtered out)
  untraced.pid = 14300;
  untraced.ns_pid = 9;
  f.set_processes({in_container(), child, untraced});
  EXPECT_EQ(f.preamble(),
            "# pid 14235 (1 in its namespace), cgroup /machine.slice/libpod-3f2a9c1b0d4e.scope, "
            "container 3f2a9c1b0d4e\n"
            "# pid 14236 (2 in its namespace), cgroup /machine.slice/libpod-3f2a9c1b0d4e.scope, "
            "container 3f2a9c1b0d4e\n");
  formats::Event fork;
  fork.kind = formats::EventKind::ProcFork;
  fork.pid = fork.tid = 14235;
  fork.arg0 = fork.arg1 = 14236;
  std::string line;
  f.format(fork, line);
  EXPECT_NE(line.find("process pid=14236 (2 in its namespace)"), std::string::npos) << line;
}
