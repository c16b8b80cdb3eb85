// Waiting for one traced thread's next stop without blocking forever: a
// blocking waitpid on a thread group leader that exited waits for the whole
// process to end, which may need atrace to reap other threads first.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>

namespace atrace::fastpath {

// The wait status of `tid`'s next stop or end; nullopt when the thread is
// gone (reaped elsewhere, a zombie leader, or the whole process ended: its
// leader's exit is left for its parent to reap). InjectError after
// `timeout`.
std::optional<int> wait_traced(pid_t pid, pid_t tid, std::chrono::milliseconds timeout);

// The real parent of `pid` (PPid: not its tracer), 0 when unknown.
pid_t parent_of(pid_t pid);

}  // namespace atrace::fastpath
