// OUTPUT.exclude, written after a recording whose relevance filters
// detached functions: the list `record --exclude=@OUTPUT.exclude` reads
// back (uprobes/exclude_file.h holds its format), so a second run leaves
// the same functions out from the start.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "formats/trace_types.h"

namespace atrace {

// Nothing when none was detached or the trace went to stdout; a file that
// cannot be written is a warning, not a failure of the recording. `exe`:
// the traced program's path (empty: read from /proc/PID/exe).
void write_exclude_list(const std::vector<formats::ProbeInfo>& detached, const std::string& output,
                        std::string exe, pid_t pid);

}  // namespace atrace
