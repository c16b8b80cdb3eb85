#include <gtest/gtest.h>

#include "analysis/syscall_names.h"

namespace atrace::analysis {

TEST(SyscallNames, KnownNumbersFromTheHeaders) {
  EXPECT_EQ(syscall_name(0), "read");
  EXPECT_EQ(syscall_name(1), "write");
  EXPECT_EQ(syscall_name(39), "getpid");
  EXPECT_EQ(syscall_name(110), "getppid");
  EXPECT_EQ(syscall_name(231), "exit_group");
  EXPECT_EQ(syscall_name(462), "mseal");  // newer than Debian 12's headers
  EXPECT_EQ(syscall_name(100000), "syscall_100000");
}

}  // namespace atrace::analysis
