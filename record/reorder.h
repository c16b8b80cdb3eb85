// Puts events back in time order. Records of one thread can reach us through
// several CPUs' rings (the thread migrated), so a drain's records are held
// until every ring has been drained past them: after a full drain that began
// at time T, nothing older than T - window is still in flight (the window
// covers a program preempted between its timestamp and its submit).
//
// A window holds tens of thousands of events at full rate (a 20 ms window
// at millions of events per second), and each drain releases only its
// oldest part: so events do not move while held. They stay where they
// arrived (a vector freed from the front, compacted when half of it is
// taken), and only a 16-byte key per event (time stamp, arrival number) is
// sorted. An event is moved in, out, and on average at most once more,
// however many drains it waits for.
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
  // (func_values.h). The pointer is valid until the next push or take.
  formats::Event* find_held(uint32_t tid, uint64_t ts, formats::EventKind kind, uint32_t id);

  // Events that arrived after their time had been released (out of order in
  // the stream; readers sort them back).
  uint64_t late() const { return late_; }
  size_t held() const { return keys_.size(); }

 private:
  struct Key {
    uint64_t ts;
    uint64_t seq;  // arrival number
    bool operator<(const Key& o) const { return ts != o.ts ? ts < o.ts : seq < o.seq; }
  };
  void sort_new_keys();
  void compact();

  // Events in arrival order from head_ on; store_[i] arrived as number
  // first_seq_ + i. Before head_: taken, waiting for the compaction.
  std::vector<formats::Event> store_;
  std::vector<uint8_t> taken_;  // parallel to store_
  size_t head_ = 0;
  uint64_t first_seq_ = 0;
  // Keys of the held events: [0, sorted_) in order, the rest as they came.
  std::vector<Key> keys_;
  size_t sorted_ = 0;
  uint64_t released_until_ = 0;
  uint64_t late_ = 0;
};

}  // namespace atrace
