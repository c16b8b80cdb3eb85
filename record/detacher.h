// Taking functions out of a recording while it runs, for the relevance
// filters, without ever stopping a traced thread:
//
//   1. off flag      the programs stop recording the function's entries at
//                    once (fn_state[id].off; its calls in flight still
//                    record their exits, so no call is left half-seen);
//   2. rebuild       its link group is re-attached without it, with a new
//                    generation (the groups of one decision at once, each
//                    on a thread); while both links are on, the first
//                    program of a hit records it (bpf/atrace.bpf.c,
//                    struct hit_mark), so the order of what follows does
//                    not matter to the kept functions;
//   3. entry link    the old entry link is closed as soon as its group is
//                    rebuilt;
//   4. return link   closed once the function has no call in flight (or
//                    after kMaxWaitNs: a call that never returns, e.g. deep
//                    recursion still running, then ends at its caller's
//                    exit in the reports).
// Closing a link removes its probes at once, then waits: for an RCU Tasks
// Trace grace period and for uretprobes_srcu (uprobe_unregister_sync). The
// second wait lasts as long as the traced program keeps hitting probes:
// each pending return of a thread holds an SRCU read lock, which the kernel
// converts to a reference only when the thread's return-instance timer
// fires, 100 ms after its last uretprobe hit (RI_TIMER_PERIOD; every hit
// re-arms it: kernel/events/uprobes.c, 6.14+), and a return pending all run
// long (main's caller's, say) is older than any grace period. So a close
// started while the program runs returns only at its end (or a pause of
// 100 ms without a probed call), long after its probes are gone. Each link
// is therefore closed on a thread of its own (LinkCloser): its probes go as
// the close begins, whatever the closes before it wait for, and never on
// the recorder's drain loop. The timings of each step are kept
// for the record's summary.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "bpf/atrace.h"
#include "record/attach.h"

namespace atrace {

// Closes links, each on a thread of its own started at once: a close
// blocks until the program stops hitting probes (above), so a pool of
// threads would fill with closes that have removed their probes and wait,
// while the next closes, and their probes, wait behind them.
class LinkCloser {
 public:
  LinkCloser() = default;
  ~LinkCloser();  // waits for every close
  LinkCloser(const LinkCloser&) = delete;
  LinkCloser& operator=(const LinkCloser&) = delete;
  // `started`/`closed` (CLOCK_MONOTONIC ns) are written when the close
  // begins and returns; read them only after drain().
  void close_later(OwnedLink link, uint64_t* started, uint64_t* closed);
  void drain();  // waits until every close has returned

 private:
  std::mutex mu_;
  std::vector<std::thread> threads_;
};

class Detacher {
 public:
  struct Timing {
    uint32_t id = 0;
    uint64_t decided = 0;     // the filter's decision
    uint64_t entry_gone = 0;  // entry link close started
    uint64_t exit_gone = 0;   // return link close started: the breakpoint goes
    uint64_t closed = 0;      // return link closed (grace period over), if by then
  };
  static constexpr uint64_t kMaxWaitNs = 1'000'000'000;

  // `state`: the mmap-ed fn_state array of `n` entries; `stat_fd`: the
  // per-CPU fn_stat map, to see calls in flight.
  Detacher(FunctionProbes& probes, atrace_fn_state* state, size_t n, int stat_fd, int ncpus);
  ~Detacher();
  // Steps 1-3 for these functions (decided at `now`). A group that cannot
  // be rebuilt sets `error`: its functions stay silenced by the off flag and
  // their probes stay until the end.
  void detach(const std::vector<uint32_t>& ids, uint64_t now, std::string& error);
  // --fast-path=hot (record/hot_switch.h), with the process stopped: steps
  // 1-3, and the old return links closed at once too (their probes go as
  // the closes begin), for functions that can_close_now().
  void detach_now(const std::vector<uint32_t>& ids, uint64_t now, std::string& error);
  // Whether these functions' return links can go now: each in a link group,
  // and no call in flight of any function of their groups (the old return
  // link serves them all).
  bool can_close_now(const std::vector<uint32_t>& ids) const;
  // Step 4 for the groups whose removed functions have returned.
  void poll(uint64_t now);
  bool pending() const { return !parked_.empty(); }
  // Starts closing everything still pending (the destructor waits for the
  // closes to return): call before the end; timings() is final then.
  void finish();
  const std::vector<Timing>& timings() const { return timings_; }

 private:
  struct Parked {
    OwnedLink exit;
    std::vector<uint32_t> ids;
    std::vector<size_t> slots;  // their timings_
    uint64_t since = 0;
  };
  int64_t in_flight(uint32_t id) const;
  void retire_exit(Parked& p);

  FunctionProbes& probes_;
  atrace_fn_state* state_;
  size_t n_;
  int stat_fd_;
  int ncpus_;
  std::deque<Timing> timing_store_;  // stable addresses for the closer
  std::vector<Timing> timings_;
  std::vector<Parked> parked_;
  LinkCloser closer_;
};

}  // namespace atrace
