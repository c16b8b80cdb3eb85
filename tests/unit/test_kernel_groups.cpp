// --kernel=LIST: group names, "all", and +/- against the default, which
// leaves system calls out when code is probed (record/kernel_groups.h).
#include <gtest/gtest.h>

#include <stdexcept>

#include "record/kernel_groups.h"

using namespace atrace;

TEST(KernelGroups, DefaultLeavesSyscallsOutWhenCodeIsProbed) {
  EXPECT_EQ(kernel_groups_string(default_kernel_groups(true)), "sched,faults,proc");
  EXPECT_EQ(kernel_groups_string(default_kernel_groups(false)), "sched,syscalls,faults,proc");
}

TEST(KernelGroups, NamesReplaceTheDefault) {
  EXPECT_EQ(parse_kernel_groups("syscalls", kKernelSched), kKernelSyscalls);
  EXPECT_EQ(parse_kernel_groups("sched,faults"), kKernelSched | kKernelFaults);
  EXPECT_EQ(parse_kernel_groups("all", 0), kKernelAll);
  EXPECT_EQ(parse_kernel_groups("", kKernelAll), 0u);
}

TEST(KernelGroups, SignsChangeTheDefault) {
  const unsigned d = default_kernel_groups(true);
  EXPECT_EQ(parse_kernel_groups("+syscalls", d), kKernelAll);
  EXPECT_EQ(parse_kernel_groups("+syscalls,-faults", d),
            kKernelSched | kKernelSyscalls | kKernelProc);
  EXPECT_EQ(parse_kernel_groups("-all", d), 0u);
}

TEST(KernelGroups, BadListsAreRefused) {
  EXPECT_THROW(parse_kernel_groups("sched,+syscalls"), std::invalid_argument);
  EXPECT_THROW(parse_kernel_groups("+bogus"), std::invalid_argument);
  EXPECT_THROW(parse_kernel_groups("schedule"), std::invalid_argument);
}

TEST(KernelGroups, NetIsOnlyOnWhenNamed) {
  EXPECT_EQ(parse_kernel_groups("+net", default_kernel_groups(true)),
            kKernelSched | kKernelFaults | kKernelProc | kKernelNet);
  EXPECT_EQ(parse_kernel_groups("all", 0) & kKernelNet, 0u);
  EXPECT_EQ(kernel_groups_string(kKernelProc | kKernelNet), "proc,net");
  EXPECT_FALSE(default_kernel_groups(false) & kKernelNet);
}
