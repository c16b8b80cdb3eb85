// A whole file read into a string, for the small files of /proc: a process
// that exits between the open and the read makes read() fail with ESRCH,
// and libstdc++'s istreambuf_iterator turns that into an exception, so
// every /proc file read whole goes through here instead.
#pragma once

#include <optional>
#include <string>

namespace atrace::base {

// The bytes of `path`; none when it cannot be opened or a read fails
// (the process behind a /proc file gone, for one). Never throws.
std::optional<std::string> read_whole_file(const std::string& path);
// The same for a file already open (read from its current offset).
std::optional<std::string> read_whole_fd(int fd);

}  // namespace atrace::base
