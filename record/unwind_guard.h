// Exception-safe return probes: the recorder's side of bpf/unwind.bpf.c
// (what it does and why: docs/exceptions.md).
//
// A guard loads the unwind programs with atrace's own rings, loss counters
// and traced-process map, so its UNWIND records reach the trace like any
// other, learns which atrace probe id each probed (file, offset) has, and
// attaches at the unwind points (uprobes/unwind_points.h): the
// unwinder's entry points, the ends of its stack walk, the catch points and
// the stack switches (swapcontext, setcontext) of every module of the
// target, and the thread-exit tracepoint. It must be attached before any
// return probe and before atrace's own thread-exit program (so a thread's
// UNWIND records come before its THREAD_EXIT), and destroyed after the
// last return probe is gone.
//
// The guard's own thread serves the programs' write requests: it writes
// the return-address slots of the waiting thread through /proc/PID/mem
// (each only where it still holds the value the program saw) and tells
// the program it may go on. Links, programs, /proc fds and the thread are
// owned here: they go with the guard.
//
// The recorder destroys the guard only after a launched target has
// exited, so an unwind after the stop is served as during it. Going, the
// guard first gives the calls still open in the processes that go on
// their return addresses back (release(); docs/exceptions.md, "After the
// recording").
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include <vector>
#include "base/unique_fd.h"

#include "record/attach.h"
#include "record/record_error.h"
#include "uprobes/probe_site.h"
#include "uprobes/unwind_points.h"

struct unwind_bpf;
struct ring_buffer;
struct atrace_unwind_write;

namespace atrace {

class UnwindGuardError : public RecordError {
 public:
  using RecordError::RecordError;
};

struct UnwindGuardMaps {
  // fds of atrace.bpf.c's maps (bpf/shared_maps.h)
  int rings = -1, lost = -1, traced_tgids = -1, thread_lost = -1, lossy_threads = -1;
  int unwind_states = -1;
};

class UnwindGuard {
 public:
  // Loads the programs; `sites` are the functions that get return probes.
  // `multi`: attach with uprobe_multi links. `task_work`: whether the
  // kernel has the task-work kfunc (KernelFeatures::task_work, probed once
  // by the recorder); probed here when not given. Throws UnwindGuardError
  // with the kernel's reason when this kernel cannot run them.
  UnwindGuard(const UnwindGuardMaps& maps, const std::vector<uprobes::ProbeSite>& sites, bool multi,
              std::optional<bool> task_work = std::nullopt);
  ~UnwindGuard();
  UnwindGuard(const UnwindGuard&) = delete;
  UnwindGuard& operator=(const UnwindGuard&) = delete;

  // The thread-exit program, then a probe on every point; pid -1: every
  // process that maps the modules (--follow-forks). Throws UnwindGuardError
  // when a point cannot be probed.
  void attach(const std::vector<uprobes::UnwindPoint>& points, pid_t pid);
  // --fast-path=hot with a launched command (docs/fast-path.md, "Hot
  // functions"): the points' probes taken off (their links closed; the
  // thread-exit program stays), with the process stopped, so that the
  // unwinders' entries can be patched; then attach_points() puts them on
  // again, where FastPath::guard_points() moved them, before it runs. The
  // links close on threads of their own, all at once (each close waits for
  // grace periods, after the kernel took the breakpoint out): the caller
  // waits for the entries' bytes instead (FastPath's code_from_files).
  void detach_points();
  // A probe on every point (attach()'s, without the thread-exit program).
  void attach_points(const std::vector<uprobes::UnwindPoint>& points, pid_t pid);

 private:
  // In each traced process still running, every return slot of atrace's
  // that still holds the trampoline gets its original address back, each
  // while its thread cannot run (bpf/unwind.bpf.c, release_scan), so that
  // an unwind through those calls after atrace has gone runs as untraced.
  // Catches stop re-arming the frames they survive. Says on stderr what
  // could not be done (threads not reached within `budget`); nothing on a
  // kernel before 6.18, which cannot (docs/exceptions.md, Limits).
  void release(std::chrono::milliseconds budget = std::chrono::milliseconds(2000));

  struct Deleter {
    void operator()(unwind_bpf* s) const;
    void operator()(ring_buffer* r) const;
  };
  static int on_request(void* self, void* data, size_t size);
  void serve(const void* data, size_t size);
  void write_slots(uint32_t tgid, const atrace_unwind_write* w, uint32_t n);
  long release_round(int iter_link);
  int mem_fd(uint32_t tgid, bool reopen);

  std::unique_ptr<unwind_bpf, Deleter> skel_;
  std::unique_ptr<ring_buffer, Deleter> requests_;
  bool multi_;
  bool can_release_ = false;     // release_scan loaded (Linux 6.18)
  std::string release_refused_;  // why a kernel with task work refused it
  OwnedLink exit_link_;
  std::vector<OwnedLink> links_;      // the points'
  std::vector<std::thread> closing_;  // detach_points()'s closes, joined when the guard goes
  // (file, function offset) of atrace's probed functions: a point in one
  // of them stays at its entry (uprobes/unwind_points.h).
  std::set<std::pair<std::string, uint64_t>> probed_;
  std::mutex mu_;                     // one writer at a time: the server's requests, release()
  std::map<uint32_t, UniqueFd> mem_;  // tgid -> /proc/TGID/mem (under mu_)
  bool releasing_ = false;            // under mu_: re-arming requests are not served
  std::atomic<bool> stop_{false};
  UniqueFd wake_;  // an eventfd in the requests' epoll: the server stops at once
  std::thread server_;
};

}  // namespace atrace

namespace atrace {

// Throws UnwindGuardError for a site in a Go program
// (uprobes::is_go_program): no probe of it can be made safe. (The
// unwinder's entry points get no probe: uprobes/probe_policy.h.)
void refuse_go_programs(const std::vector<uprobes::ProbeSite>& sites);

}  // namespace atrace
