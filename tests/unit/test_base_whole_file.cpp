// base/whole_file.h: /proc files read whole without throwing, even when
// their process is gone between the open and the read.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "base/unique_fd.h"
#include "base/whole_file.h"
#include "tests/unit/temp_file.h"

namespace atrace {
namespace {

TEST(BaseWholeFile, ReadsEveryByteOfAFile) {
  std::string big(10000, 'x');
  big[0] = '\0';  // binary-safe: /proc/PID/cmdline is NUL-separated
  big[9999] = 'y';
  testing::TempFile f;
  f.set_bytes(big);
  EXPECT_EQ(base::read_whole_file(f.path()), big);
}

TEST(BaseWholeFile, AMissingFileIsNone) {
  EXPECT_EQ(base::read_whole_file("/proc/self/no-such-file"), std::nullopt);
}

TEST(BaseWholeFile, AProcessReapedAfterTheOpenIsNoneNotAThrow) {
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  UniqueFd fd(::open(("/proc/" + std::to_string(child) + "/cmdline").c_str(), O_RDONLY));
  ASSERT_TRUE(fd);
  ::kill(child, SIGKILL);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
  // read() now fails with ESRCH, which istreambuf_iterator would throw.
  EXPECT_EQ(base::read_whole_fd(fd.get()), std::nullopt);
}

TEST(BaseWholeFile, ALiveProcessesCommandLine) {
  auto cmdline = base::read_whole_file("/proc/self/cmdline");
  ASSERT_TRUE(cmdline);
  EXPECT_NE(cmdline->find("atrace_unit_tests"), std::string::npos);
}

}  // namespace
}  // namespace atrace
