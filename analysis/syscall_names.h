// Names of x86-64 system calls, for reports and `atrace script`.
//
//   syscall_name(nr)   "read", "getppid", ... or "syscall_NNN" if unknown
#pragma once

#include <cstdint>
#include <string>

namespace atrace::analysis {

std::string syscall_name(uint64_t nr);

}  // namespace atrace::analysis
