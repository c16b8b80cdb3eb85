// Puts events back in time order. Records of one thread can reach us through
// several CPUs' rings (the thread migrated), so a drain's records are held
// until every ring has been drained past them: after a full drain that began
// at time T, nothing older than T - window is still in flight (the window
// covers a program preempted between its timestamp and its submit).
#pragma once

#include <cstdint>
#include <vector>

#include "formats/trace_types.h"

namespace atrace {

class Reorderer {
 public:
  void push(formats::Event&& ev);
  // Every held event with ts <= cutoff, in time order (ties keep arrival
  // order, so a thread's entry and exit with equal stamps stay in order).
  std::vector<formats::Event> take_until(uint64_t cutoff);
  std::vector<formats::Event> take_all() { return take_until(UINT64_MAX); }
  // The held event of thread `tid` with this time stamp, kind and id (the
  // newest such), or nullptr; for a record that completes an event
  // (func_values.h).
  formats::Event* find_held(uint32_t tid, uint64_t ts, formats::EventKind kind, uint32_t id);

  // Events that arrived after their time had been released (out of order in
  // the stream; readers sort them back).
  uint64_t late() const { return late_; }

 private:
  std::vector<formats::Event> held_;
  uint64_t released_until_ = 0;
  uint64_t late_ = 0;
};

}  // namespace atrace
