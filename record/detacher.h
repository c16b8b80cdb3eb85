// Taking functions out of a recording while it runs, for the relevance
// filters, without ever stopping a traced thread:
//
//   1. off flag      the programs stop recording the function's entries at
//                    once (fn_state[id].off; its calls in flight still
//                    record their exits, so no call is left half-seen);
//   2. rebuild       its link group is re-attached without it, the kept
//                    functions switch to the new links' generation;
//   3. entry link    the old entry link is closed (the kept functions are
//                    on the new links, the removed ones silenced);
//   4. return link   closed once the function has no call in flight (or
//                    after kMaxWaitNs: a call that never returns, e.g. deep
//                    recursion still running, then ends at its caller's
//                    exit in the reports).
// Closing a link waits for an RCU grace period (tens of ms): it happens on
// a thread of its own (LinkCloser), never on the recorder's drain loop.
// The breakpoint leaves the traced code as soon as the close starts; the
// timings of each step are kept for the record's summary.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "bpf/atrace.h"
#include "record/attach.h"

namespace atrace {

// Closes links on background threads, several at once: each close waits
// for a grace period, and concurrent waits share it. (Order does not
// matter by then: the off flag and the generation switch have already
// silenced the links being closed.)
class LinkCloser {
 public:
  LinkCloser();
  ~LinkCloser();  // closes whatever is still queued, then joins
  LinkCloser(const LinkCloser&) = delete;
  LinkCloser& operator=(const LinkCloser&) = delete;
  // `started`/`closed` (CLOCK_MONOTONIC ns) are written when the close
  // begins and returns; read them only after drain().
  void close_later(OwnedLink link, uint64_t* started, uint64_t* closed);
  void drain();  // waits until the queue is empty

 private:
  struct Item {
    OwnedLink link;
    uint64_t* started;
    uint64_t* closed;
  };
  void run();
  std::mutex mu_;
  std::condition_variable cv_, idle_;
  std::deque<Item> queue_;
  int busy_ = 0;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

class Detacher {
 public:
  struct Timing {
    uint32_t id = 0;
    uint64_t decided = 0;     // the filter's decision
    uint64_t entry_gone = 0;  // entry link close started
    uint64_t exit_gone = 0;   // return link close started: the breakpoint goes
    uint64_t closed = 0;      // return link closed (grace period over)
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
  // Step 4 for the groups whose removed functions have returned.
  void poll(uint64_t now);
  bool pending() const { return !parked_.empty(); }
  // Closes everything still pending and waits: call before the end.
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
