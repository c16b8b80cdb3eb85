// Kernel event groups of `atrace record --kernel=LIST`: which tracepoints
// a group turns on (bpf/atrace.bpf.c) and their names on the command line
// and in the trace header.
//
//   sched     context switches (with the state left in), wake-ups, migrations
//   syscalls  system call entries and exits (number, return value)
//   faults    user page faults (address, instruction, write bit)
//   proc      fork/clone, exec, process exit, thread names as they change
#pragma once

#include <string>
#include <string_view>

namespace atrace {

enum KernelGroup : unsigned {
  kKernelSched = 1u << 0,
  kKernelSyscalls = 1u << 1,
  kKernelFaults = 1u << 2,
  kKernelProc = 1u << 3,
  kKernelAll = kKernelSched | kKernelSyscalls | kKernelFaults | kKernelProc,
};

inline constexpr const char* kDefaultKernelGroups = "sched,syscalls,faults,proc";

// "sched,syscalls" -> mask; "" -> 0. Throws std::invalid_argument naming
// the group it does not know.
unsigned parse_kernel_groups(std::string_view list);
// The mask as the header stores it: "sched,syscalls,faults,proc" order.
std::string kernel_groups_string(unsigned mask);

}  // namespace atrace
