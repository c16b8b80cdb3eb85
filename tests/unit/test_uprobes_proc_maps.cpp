// Modules of a running process and of a program about to be launched.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "temp_file.h"
#include "uprobes/proc_maps.h"

using atrace::uprobes::find_executable;
using atrace::uprobes::launch_modules;
using atrace::uprobes::Module;
using atrace::uprobes::process_modules;
using atrace::uprobes::ProcessError;

namespace {

std::string self_exe() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

const Module* by_name(const std::vector<Module>& mods, const std::string& name) {
  for (const auto& m : mods)
    if (m.name == name) return &m;
  return nullptr;
}

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const ProcessError& e) {
    return e.what();
  }
  return "no error";
}

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = getenv(name)) {
      old_ = old;
      had_ = true;
    }
    if (value) setenv(name, value, 1);
    else unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_) setenv(name_, old_.c_str(), 1);
    else unsetenv(name_);
  }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

}  // namespace

TEST(UprobesProcMaps, SelfHasTestBinaryFirstThenLibc) {
  const auto mods = process_modules(getpid());
  ASSERT_GE(mods.size(), 2u);
  EXPECT_TRUE(mods[0].is_main);
  EXPECT_EQ(mods[0].path, self_exe());
  EXPECT_EQ(mods[0].name, mods[0].path.substr(mods[0].path.rfind('/') + 1));
  const Module* libc = by_name(mods, "libc.so.6");
  ASSERT_NE(libc, nullptr);
  EXPECT_FALSE(libc->is_main);
  EXPECT_EQ(access(libc->path.c_str(), R_OK), 0);

  std::set<std::string> paths;
  for (size_t i = 0; i < mods.size(); ++i) {
    EXPECT_EQ(mods[i].path.front(), '/') << mods[i].path;  // no [vdso], no anonymous
    EXPECT_TRUE(paths.insert(mods[i].path).second) << "twice: " << mods[i].path;
    if (i > 0) {
      EXPECT_FALSE(mods[i].is_main);
    }
  }
}

TEST(UprobesProcMaps, ProcessErrors) {
  EXPECT_EQ(error_of([] { process_modules(99999999); }), "no process with pid 99999999");
  // kthreadd: a process without an executable.
  EXPECT_NE(error_of([] { process_modules(2); }), "no error");
}

TEST(UprobesProcMaps, PermissionDenied) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to drop privileges";
  // A child without privileges looks at init (pid 1), owned by root.
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0) _exit(2);
    std::string msg = error_of([] { process_modules(1); });
    _exit(msg.find("permission denied") != std::string::npos ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(UprobesProcMaps, LaunchModulesOfLs) {
  const auto mods = launch_modules("/bin/ls");
  ASSERT_GE(mods.size(), 3u);
  EXPECT_TRUE(mods[0].is_main);
  EXPECT_EQ(mods[0].name, "ls");
  char real[PATH_MAX];
  ASSERT_NE(realpath("/bin/ls", real), nullptr);
  EXPECT_EQ(mods[0].path, real);

  const Module* libc = by_name(mods, "libc.so.6");
  ASSERT_NE(libc, nullptr);
  EXPECT_FALSE(libc->is_main);
  ASSERT_NE(realpath(libc->path.c_str(), real), nullptr);
  EXPECT_EQ(libc->path, real);                                // canonical
  EXPECT_NE(by_name(mods, "ld-linux-x86-64.so.2"), nullptr);  // the interpreter
  for (const auto& m : mods) EXPECT_EQ(m.name.find("vdso"), std::string::npos);
}

TEST(UprobesProcMaps, LaunchModulesOfStaticProgram) {
  // Debian's ldconfig is a static-pie executable: no PT_INTERP.
  if (access("/sbin/ldconfig", X_OK) != 0) GTEST_SKIP() << "no /sbin/ldconfig";
  const auto mods = launch_modules("/sbin/ldconfig");
  ASSERT_EQ(mods.size(), 1u);
  EXPECT_TRUE(mods[0].is_main);
  EXPECT_EQ(mods[0].name, "ldconfig");
}

TEST(UprobesProcMaps, LaunchModulesErrors) {
  EXPECT_NE(error_of([] { launch_modules("/nonexistent/prog"); }).find("cannot open"),
            std::string::npos);
  atrace::testing::TempFile script("script");
  script.set_bytes("#!/bin/sh\necho hi\n");
  EXPECT_NE(error_of([&] { launch_modules(script.path()); }).find("not an ELF executable"),
            std::string::npos);
}

TEST(UprobesProcMaps, NoDescriptorOrChildLeaks) {
  auto open_fds = [] {
    return std::distance(std::filesystem::directory_iterator("/proc/self/fd"),
                         std::filesystem::directory_iterator{});
  };
  const auto before = open_fds();
  for (int i = 0; i < 10; ++i) {
    launch_modules("/bin/ls");
    process_modules(getpid());
  }
  EXPECT_EQ(open_fds(), before);
  // Every loader run was reaped.
  EXPECT_EQ(waitpid(-1, nullptr, WNOHANG), -1);
}

TEST(UprobesProcMaps, FindExecutable) {
  const std::string ls = find_executable("ls");
  EXPECT_EQ(ls.substr(ls.rfind('/')), "/ls");
  EXPECT_EQ(access(ls.c_str(), X_OK), 0);
  EXPECT_EQ(find_executable("/bin/ls"), "/bin/ls");
  EXPECT_EQ(error_of([] { find_executable("atrace-no-such-command-xyz"); }),
            "command not found: atrace-no-such-command-xyz");
  EXPECT_EQ(error_of([] { find_executable("/nonexistent/ls"); }),
            "command not found: /nonexistent/ls");
  EXPECT_EQ(error_of([] { find_executable("/etc/passwd"); }),
            "not an executable file: /etc/passwd");
  // Directories are not commands even though they have the x bit.
  EXPECT_EQ(error_of([] { find_executable("/tmp"); }), "not an executable file: /tmp");
}

TEST(UprobesProcMaps, FindExecutableSearchesPathInOrder) {
  atrace::testing::TempFile tmp("path");  // a directory, removed with its files
  const std::string& dir = tmp.path();
  mkdir(dir.c_str(), 0755);
  const std::string prog = dir + "/atrace-test-prog";
  std::ofstream(prog) << "#!/bin/sh\n";
  const std::string noexec = dir + "/ls";  // not executable: must be skipped
  std::ofstream(noexec) << "#!/bin/sh\n";
  chmod(prog.c_str(), 0755);
  chmod(noexec.c_str(), 0644);
  {
    ScopedEnv env("PATH", (dir + ":/usr/bin:/bin").c_str());
    EXPECT_EQ(find_executable("atrace-test-prog"), prog);
    const std::string ls = find_executable("ls");
    EXPECT_NE(ls, noexec);
    EXPECT_TRUE(ls == "/usr/bin/ls" || ls == "/bin/ls") << ls;
  }
  {
    ScopedEnv env("PATH", nullptr);  // default search path
    const std::string ls = find_executable("ls");
    EXPECT_TRUE(ls == "/usr/bin/ls" || ls == "/bin/ls") << ls;
  }
}
