// Kernel event groups of `atrace record --kernel=LIST`: which tracepoints
// a group turns on (bpf/atrace_kernel.bpf.h) and their names on the command line
// and in the trace header.
//
//   sched     context switches (with the state left in), wake-ups, migrations
//   syscalls  system call entries and exits (number, return value)
//   faults    user page faults (address, instruction, write bit)
//   proc      fork/clone, exec, process exit, thread names as they change
//   net       messages sent and received: TCP, UDP, unix sockets, pipes
//             (bpf/atrace_net.bpf.h); only when named, never by default
//             nor in "all"
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
  // Not in kKernelAll: it is on the system call tracepoints, which put
  // every system call of the machine on the kernel's slow path, like
  // syscalls (docs/BENCHMARKS.md, "Messages"), so it is asked for.
  kKernelNet = 1u << 4,
};

// The groups recorded without --kernel. Every group but syscalls costs a
// traced call nothing (its tracepoints fire on scheduling, faults and
// process events only). The syscall tracepoints do: while a program is on
// them, every system call of the machine takes the kernel's slow path, and
// so do the uprobe and uretprobe system calls through which each traced
// call enters (NOP5 path) and returns (docs/BENCHMARKS.md, "Kernel
// groups"). So syscalls are on by default only when no function or USDT
// probe is asked for; `--kernel=+syscalls` adds them.
unsigned default_kernel_groups(bool probes_code);
inline constexpr const char* kDefaultKernelGroupsHelp =
    "sched,faults,proc with --select/--usdt, all four without";

// "sched,syscalls" -> mask; "" -> 0; "all". Items with a sign change
// `defaults` instead: "+syscalls" adds, "-faults" takes out (signed and
// plain items cannot be mixed). Throws std::invalid_argument naming the
// group it does not know.
unsigned parse_kernel_groups(std::string_view list, unsigned defaults = kKernelAll);
// "sched, syscalls, faults, proc, net, all": the names parse_kernel_groups takes
// (for messages and the completion).
std::string kernel_group_names();
// The mask as the header stores it: "sched,syscalls,faults,proc,net" order.
std::string kernel_groups_string(unsigned mask);

}  // namespace atrace
