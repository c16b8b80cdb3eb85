// The recording's main loop: wakes on a timer sized to the rings (the
// programs never wake it), on a stop signal and on the target's exit, and
// each time hands over to `on_wake`, which drains the rings and writes.
#pragma once

#include <cstdint>
#include <functional>

namespace atrace {

class StopSignals;

struct DrainLoop {
  int rings_fd = -1;   // readable when a program forces a wake-up
  int target_fd = -1;  // the target's pidfd: readable once it exited
  StopSignals* stop = nullptr;
  uint64_t period_ns = 0;             // the timer
  uint64_t deadline_ns = UINT64_MAX;  // --duration (CLOCK_MONOTONIC)
  // Several traced processes (--follow-forks, -p A,B, --cgroup): the
  // recording ends when no traced process is left, not when the first
  // one exits.
  bool several = false;
  std::function<bool()> processes_left;
  // --follow-forks in launch mode: readable when a followed process
  // stopped (an exec to probe) or ended; `on_children` is called at once,
  // before on_wake, so that the process is held no longer than that.
  int children_fd = -1;
  std::function<void()> on_children;
  // Called after every wake-up, with the time, the last time with stop
  // set; returning true stops the loop there (`atrace top`'s q key).
  std::function<bool(uint64_t now)> on_wake;
};

// Runs until a stop signal, the target's exit or the deadline; throws
// RecordError when epoll fails.
void run_until_stop(const DrainLoop& loop);

}  // namespace atrace
