// --fast-path=all|hot (issue 35, docs/fast-path.md "Hot functions"):
// `all` is what bare --fast-path means; `hot` is refused with one line
// with --follow-forks; and
// the kernel fact its design builds on, pinned: a uprobe on code in a memfd
// mapped private and executable fires, and runs the file's bytes.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/integration/fixture.h"

namespace atrace::it {
namespace {

class FastPathHot : public IntegrationTest {};

// Refused with one line: --follow-forks (one process so far);
// tests/integration/test_fastpath_hot_switch.cpp has the rest, a launched
// command too.
TEST_F(FastPathHot, HotIsRefusedWithFollowForks) {
  Result forks = run({Paths::atrace, "record", "-p", std::to_string(getpid()), "--fast-path=hot",
                      "--follow-forks", "--select=libc.so.6:getppid", "-o", file("forks.data")});
  EXPECT_FALSE(forks.exited(0)) << forks.describe();
  const std::string line = expect_one_error_line(forks);
  EXPECT_NE(line.find("not with --follow-forks"), std::string::npos) << line;
  struct stat st {};
  EXPECT_NE(stat(file("forks.data").c_str(), &st), 0) << "no trace is written";
}

TEST_F(FastPathHot, AnUnknownModeIsRefused) {
  Result r = run({Paths::atrace, "record", "-p", std::to_string(getpid()), "--fast-path=cold",
                  "--select=work", "-o", file("cold.data")});
  EXPECT_TRUE(r.exited(2)) << r.describe();
  const std::string line = expect_one_error_line(r);
  EXPECT_NE(line.find("--fast-path"), std::string::npos) << line;
}

// The fd of `pid` that is the memfd named `name`, or -1.
int memfd_of(pid_t pid, const std::string& name) {
  const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
  DIR* d = opendir(dir.c_str());
  if (!d) return -1;
  int found = -1;
  while (dirent* e = readdir(d)) {
    char link[256] = {};
    const std::string path = dir + "/" + e->d_name;
    if (readlink(path.c_str(), link, sizeof link - 1) > 0 &&
        std::string(link).find("/memfd:" + name) == 0)
      found = atoi(e->d_name);
  }
  closedir(d);
  return found;
}

bool tracefs_write(const std::string& file, const std::string& text) {
  int fd = open(("/sys/kernel/tracing/" + file).c_str(), O_WRONLY | O_APPEND);
  if (fd < 0) return false;
  const bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  return ok;
}

// The hits uprobe_profile counts for the event `event` on `path` ("" when
// absent).
std::string hits_of(const std::string& path, const std::string& event) {
  std::ifstream in("/sys/kernel/tracing/uprobe_profile");
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string file, name, hits;
    if (words >> file >> name >> hits && file == path && name == event) return hits;
  }
  return "";
}

// What --fast-path=hot would stand on: the guard's uprobes moved from the
// unwinders' entries onto their trampolines in the code region, made a
// memfd. They fire there; and they run the instruction the file holds, so
// the code must be written into the memfd (its page cache), not into the
// process's private copy as atrace writes code today.
TEST_F(FastPathHot, AUprobeOnPrivateMemfdCodeFiresAndRunsTheFilesBytes) {
  // A machine without systemd's sys-kernel-tracing.mount has the mount
  // point but nothing on it: mounted here, as bpftrace and perf do.
  if (access("/sys/kernel/tracing/uprobe_events", W_OK) != 0)
    mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, nullptr);
  if (access("/sys/kernel/tracing/uprobe_events", W_OK) != 0)
    FAIL() << "tracefs is not mounted at /sys/kernel/tracing and could not be: " << strerror(errno);
  const std::string go = file("go");
  Child target({TARGET_MEMFD_CODE_BIN, go});
  int fd = -1;
  for (int i = 0; i < 500 && target.running(); i++) {
    std::ifstream maps("/proc/" + std::to_string(target.pid()) + "/maps");
    std::stringstream all;
    all << maps.rdbuf();
    if (all.str().find("memfd:atrace-hot-exp") != std::string::npos &&
        (fd = memfd_of(target.pid(), "atrace-hot-exp")) >= 0)
      break;
    std::this_thread::sleep_for(milliseconds(10));
  }
  ASSERT_GE(fd, 0) << target.wait(milliseconds(5000)).describe();
  const std::string group = "atrace_hot_exp_" + std::to_string(target.pid());
  const std::string path = "/proc/" + std::to_string(target.pid()) + "/fd/" + std::to_string(fd);
  // Whatever happens below, the two events go: other tests look for
  // uprobes left behind.
  struct Cleanup {
    std::string group;
    ~Cleanup() {
      tracefs_write("events/" + group + "/enable", "0");
      tracefs_write("uprobe_events", "-:" + group + "/same\n");
      tracefs_write("uprobe_events", "-:" + group + "/diverged\n");
    }
  } cleanup{group};
  ASSERT_TRUE(tracefs_write("uprobe_events", "p:" + group + "/same " + path + ":0x100\n"));
  ASSERT_TRUE(tracefs_write("uprobe_events", "p:" + group + "/diverged " + path + ":0x1200\n"));
  EXPECT_TRUE(tracefs_write("events/" + group + "/enable", "1"));
  // Code written into the file after the probes: probed_page()'s and
  // other_page()'s immediates become 5.
  {
    int file = open(path.c_str(), O_WRONLY);
    ASSERT_GE(file, 0) << path;
    const char five = 5;
    EXPECT_EQ(pwrite(file, &five, 1, 0x301), 1);
    EXPECT_EQ(pwrite(file, &five, 1, 0x2301), 1);
    close(file);
  }
  std::ofstream(go).put('\n');
  Result t = target.wait(milliseconds(30000));
  const std::string same = hits_of(path, "same"), diverged = hits_of(path, "diverged");
  ASSERT_TRUE(t.exited(0)) << t.describe();
  EXPECT_EQ(same, "1000");
  EXPECT_EQ(diverged, "1000");
  // same(): file and memory agree, 42 a call. diverged(): memory says 42,
  // the file 7, and the probed instruction runs out of line from the file.
  // The write into the file reached other_page() (5) and not probed_page()
  // (1): the breakpoints made their page the process's private copy.
  EXPECT_EQ(t.out, "same 42000 diverged 7000 probed_page 1 other_page 5\n");
}

}  // namespace
}  // namespace atrace::it
