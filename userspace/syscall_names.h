// Names of x86-64 system calls, for reports and `atrace script`.
//
//   syscall_name(nr)   "read", "getppid", ... or "syscall_NNN" if unknown
//   syscall_number(s)  the reverse, for filters; -1 if unknown
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace atrace::analysis {

std::string syscall_name(uint64_t nr);
int64_t syscall_number(std::string_view name);

}  // namespace atrace::analysis
