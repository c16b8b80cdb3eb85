// The value of a USDT semaphore in a running process: how many tracers have
// the probe on right now (the kernel adds one per uprobe registered with it
// as reference counter). `atrace list -p PID --usdt` shows it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

namespace atrace::uprobes {

// The 2-byte counter at `file_offset` of `module_path` as mapped by `pid`
// (through /proc/PID/maps and /proc/PID/mem); nullopt when the module is
// not mapped there or the memory cannot be read.
std::optional<uint16_t> read_semaphore(pid_t pid, const std::string& module_path,
                                       uint64_t file_offset);

}  // namespace atrace::uprobes
