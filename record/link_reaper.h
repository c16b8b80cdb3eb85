// Leaving without waiting for the kernel's grace periods. Closing a
// uprobe link waits for an RCU tasks-trace grace period and an SRCU one
// (uprobe_unregister_sync), 50-150 ms a link here, and atrace closes
// several (entries, returns, module hooks, the unwind guard's): that was
// half a second of a short recording's end. Once the traced processes are
// gone no probe of theirs can fire, so the closing is only clean-up: a
// forked helper takes over atrace's links and closes them after atrace has
// left, and the recorder's own closes then return at once (the links live
// on until the helper's go).
//
//   LinkReaper reaper = hand_links_to_reaper();  // when the target is gone
//   ... destroy the links as usual ...
//   reaper = {};  // (or at exit) the helper closes its copies now
#pragma once

#include <string>
#include <vector>

#include "base/unique_fd.h"

namespace atrace {

// Held while the recorder closes its own copies of the links: the helper
// waits for this pipe's end to close before it closes its copies (had it
// closed one first, the recorder's close would be the last one, and wait).
struct LinkReaper {
  UniqueFd go;
  explicit operator bool() const { return go.get() >= 0; }
};

// Forks a helper (its own session, no terminal's signals, every other fd
// closed, nothing of the recorder's memory touched) that closes this
// process's BPF links and exits; not waited for. Empty when there is no
// link or no helper could be made (the caller then closes them itself).
LinkReaper hand_links_to_reaper();

// The fds of this process's BPF links (/proc/self/fd).
std::vector<int> bpf_link_fds();

}  // namespace atrace
