// Every fast path install of a recording (record/fast_path.h): the traced
// program's, and with --follow-forks for a launched command each program a
// followed process execs later, patched at its entry point with a ring and
// code regions of its own (Recorder::patch_exec). What the recorder does
// with all of them at once is here, once:
//
//   events     the kernel's events go to each (its threads, its forks, its
//              process's end)
//   forks      a followed process's new child, at its first stop, to the
//              install whose process forked it (FastPath::forked)
//   drain      each one's records; the release edge is the earliest of
//              theirs; drained() when every one is; an exec'd program's
//              install let go once finished (its counts kept)
//   end        each one's uninstall; their counts summed for the summary
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "formats/trace_types.h"
#include "record/fast_path.h"

namespace atrace {

class FastPaths {
 public:
  // `first`: the traced program's install (hot mode's, the one whose
  // functions the filters switch), owned by the caller, outliving this.
  explicit FastPaths(FastPath& first) : first_(first) {}

  // A program exec'd since, patched.
  void add(std::unique_ptr<FastPath> install) { more_.push_back(std::move(install)); }

  void on_kernel_event(const formats::Event& ev);
  // The install one of whose processes forked `child` (held at its first
  // stop) gives it its ring; false when none did.
  bool forked(pid_t child);
  void drain(std::vector<formats::Event>& out);
  // FastPath::complete_until_ns(), the earliest over the installs.
  uint64_t complete_until_ns() const;
  bool drained() const;
  void uninstall();
  FastPathStats stats() const;

 private:
  template <typename F>
  void each(F&& f) const;

  FastPath& first_;
  std::vector<std::unique_ptr<FastPath>> more_;
  // The counts of the installs let go once finished (a shell runs
  // thousands of programs: each install holds its lanes' mappings).
  FastPathStats finished_;
};

}  // namespace atrace
