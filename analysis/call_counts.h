// The numbers the profile folds each closed call into, for one function on
// one thread or on all of them: counters and times only, no names and no
// ids (a report row, FunctionStats, gets those when it is made). A trace
// of many threads calling many functions holds one of these per (thread,
// function called) at most, so it is kept small: about 170 bytes, where a
// FunctionStats with its two strings is about 300.
#pragma once

#include <algorithm>
#include <cstdint>

#include "analysis/call_replay.h"
#include "analysis/kernel_attribution.h"

namespace atrace::analysis {

struct CallCounts {
  uint64_t calls = 0;
  uint64_t unfinished = 0;
  uint64_t unwound = 0;
  uint64_t abandoned = 0;
  uint64_t untimed = 0;
  uint64_t switched = 0;
  uint64_t given_back = 0;
  uint64_t total_ns = 0;
  uint64_t self_ns = 0;
  uint64_t min_ns = 0;
  uint64_t max_ns = 0;
  uint64_t finished_ns = 0;
  KernelTimes kernel;
  KernelTimes self_kernel;

  uint64_t finished_calls() const { return calls - untimed - unfinished; }

  // Folds one closed call in (FunctionStats' fields say what each counts).
  void add(const ClosedCall& c) {
    if (!timed(c.how)) {  // counted, never timed (call_replay.h)
      calls++;
      untimed++;
      if (c.untimed == UntimedReason::StackSwitch) switched++;
      if (c.untimed == UntimedReason::GivenBack) given_back++;
      self_kernel += c.self_kernel;
      if (c.outermost) kernel += c.kernel;
      return;
    }
    const bool finished = !analysis::unfinished(c.how);
    if (finished) {
      if (finished_calls() == 0 || c.dur < min_ns) min_ns = c.dur;
      max_ns = std::max(max_ns, c.dur);
    }
    calls++;
    if (!finished) unfinished++;
    if (c.how == CallEnd::Unwound) unwound++;
    if (c.how == CallEnd::Abandoned) abandoned++;
    self_ns += c.self_ns;
    self_kernel += c.self_kernel;
    if (c.outermost) {  // recursion: the outermost activation only
      total_ns += c.dur;
      if (finished) finished_ns += c.dur;
      kernel += c.kernel;
    }
  }

  // Copies the numbers into a row (its names, id, tid and marks are the
  // caller's).
  template <typename Row>
  void fill(Row& r) const {
    r.calls = calls;
    r.unfinished = unfinished;
    r.unwound = unwound;
    r.abandoned = abandoned;
    r.untimed = untimed;
    r.switched = switched;
    r.given_back = given_back;
    r.total_ns = total_ns;
    r.self_ns = self_ns;
    r.min_ns = min_ns;
    r.max_ns = max_ns;
    r.finished_ns = finished_ns;
    r.kernel = kernel;
    r.self_kernel = self_kernel;
  }
};

}  // namespace atrace::analysis
