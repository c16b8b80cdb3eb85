// --fast-path=hot: a function the relevance filter finds too costly for
// the kernel's probes is patched instead of detached (docs/fast-path.md,
// "Hot functions"). Its trampoline was written at the start, switched off;
// here, in one stop of every thread:
//
//   1. check     no thread inside its entry's bytes and no call of it in
//                flight (its return link can go at once); else the process
//                is let go and stopped again, a bounded number of times
//   2. detach    its off flag set, its group re-attached without it, its
//                old entry and return links closed (record/detacher.h)
//   3. wait      its entry read back through /proc/PID/mem until it holds
//                the original bytes again (no int3: the closes remove the
//                breakpoints on their own threads)
//   4. patch     the jump to its trampoline written (FastPath::set_enabled)
//
// No thread runs between the last entry the kernel recorded and the first
// the trampoline records: every call is recorded once. The stop is made
// and released on the caller's thread (ptrace: the thread that seizes
// stops); the drain loop's, where the filter decides.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace atrace {

class Detacher;
class FastPath;

struct HotSwitchResult {
  std::vector<uint32_t> patched;   // off the kernel's probes, on the fast path
  std::vector<uint32_t> busy;      // untouched (in flight at every stop): to detach as usual
  std::vector<uint32_t> detached;  // off the kernel's probes, not patched (`error`)
  std::string error;
  unsigned stops = 0;
  uint64_t held_ns = 0;  // the program stopped, the longest stop
};

HotSwitchResult patch_instead(pid_t pid, FastPath& fast, Detacher& detacher,
                              const std::vector<uint32_t>& ids, uint64_t now);

}  // namespace atrace
