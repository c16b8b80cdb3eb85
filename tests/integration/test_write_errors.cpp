// Write errors while recording (disk full, the reader of `-o -` gone): the
// recording stops at once, everything of atrace's leaves the kernel while
// the launched target runs on, the error is said once, atrace fails, and
// the file is readable up to the error.
#include <signal.h>
#include <sys/mount.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/integration/fixture.h"
#include "tests/integration/report.h"

namespace atrace::it {
namespace {

class WriteErrors : public IntegrationTest {};

int bpf_objects_of(pid_t pid) {
  int n = 0;
  std::error_code ec;
  for (const auto& e :
       std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
    std::error_code ec2;
    std::string what = std::filesystem::read_symlink(e.path(), ec2).string();
    n += what == "anon_inode:bpf_link" || what == "anon_inode:bpf-prog";
  }
  return n;
}

// A small tmpfs, unmounted at the end whatever happens.
struct SmallTmpfs {
  explicit SmallTmpfs(const std::string& dir) : dir_(dir) {
    std::filesystem::create_directory(dir);
    ok = ::mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=512k") == 0;
  }
  ~SmallTmpfs() {
    if (ok) ::umount2(dir_.c_str(), MNT_DETACH);
  }
  bool ok;

 private:
  std::string dir_;
};

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

// True once atrace (alive) holds no BPF object while `target` still runs.
bool detached_while_target_runs(pid_t atrace, pid_t target) {
  const auto deadline = std::chrono::steady_clock::now() + scaled(milliseconds(30000));
  while (std::chrono::steady_clock::now() < deadline && ::kill(target, 0) == 0) {
    if (::kill(atrace, 0) == 0 && bpf_objects_of(atrace) == 0) return ::kill(target, 0) == 0;
    std::this_thread::sleep_for(milliseconds(20));
  }
  return false;
}

TEST_F(WriteErrors, FullDiskStopsTheRecordingAtOnce) {
  SmallTmpfs fs(file("small"));
  ASSERT_TRUE(fs.ok) << "mount tmpfs: " << std::strerror(errno);
  {  // leave 48 KiB free: the header fits, the events soon do not
    std::ofstream filler(file("small/filler"), std::ios::binary);
    std::string block(4096, 'x');
    for (int i = 0; i < (512 - 48) / 4; ++i) filler << block;
  }
  std::string out = file("small/full.data");
  Child atrace({Paths::atrace, "record", "-o", out, "--select=tick", "--", Paths::target_threads,
                "--forever", "60", tag_arg()});
  auto pid_line = atrace.wait_for_line("pid=", milliseconds(20000));
  ASSERT_TRUE(pid_line) << atrace.wait(milliseconds(1000)).describe();
  const pid_t target = static_cast<pid_t>(std::stol(pid_line->substr(4)));
  EXPECT_TRUE(detached_while_target_runs(atrace.pid(), target))
      << "atrace kept its probes and tracepoints after the disk filled";
  ::kill(target, SIGTERM);
  Result r = atrace.wait(milliseconds(30000));
  EXPECT_TRUE(r.exited(1)) << r.describe();
  EXPECT_EQ(count(r.err, "No space left on device"), 1u) << r.describe();
  EXPECT_EQ(r.err.find("written to"), std::string::npos) << "no success summary\n" << r.describe();
  Result rep = run({Paths::atrace, "report", "-i", out});
  EXPECT_TRUE(rep.exited(0)) << rep.describe();
  expect_no_uprobe_events_left();
}

TEST_F(WriteErrors, ReaderOfStdoutGoneStopsTheRecordingAtOnce) {
  // The target's output goes to stderr with -o -; head takes 1000 bytes.
  const std::string pipeline = "set -o pipefail; \"$0\" \"$@\" | head -c 1000 > /dev/null";
  Child sh({"/bin/bash", "-c", pipeline, Paths::atrace, "record", "-o", "-", "--select=tick", "--",
            Paths::target_threads, "--forever", "60", tag_arg()});
  // atrace and its target both carry the tag; tell them apart by their exe.
  pid_t atrace = 0, target = 0;
  const auto deadline = std::chrono::steady_clock::now() + scaled(milliseconds(20000));
  while ((!atrace || !target) && std::chrono::steady_clock::now() < deadline) {
    for (pid_t p : pids_with_arg(tag_)) {
      std::error_code ec;
      auto exe = std::filesystem::read_symlink("/proc/" + std::to_string(p) + "/exe", ec);
      if (exe == std::filesystem::path(Paths::atrace)) atrace = p;
      if (exe == std::filesystem::path(Paths::target_threads)) target = p;
    }
    std::this_thread::sleep_for(milliseconds(10));
  }
  ASSERT_TRUE(atrace && target) << sh.wait(milliseconds(1000)).describe();
  EXPECT_TRUE(detached_while_target_runs(atrace, target))
      << "atrace kept its probes and tracepoints after its reader went away";
  ::kill(target, SIGTERM);
  Result r = sh.wait(milliseconds(30000));
  EXPECT_TRUE(r.exited(1)) << r.describe();
  EXPECT_EQ(count(r.err, "Broken pipe"), 1u) << r.describe();
  expect_no_uprobe_events_left();
}

}  // namespace
}  // namespace atrace::it
