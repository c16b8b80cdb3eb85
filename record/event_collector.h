// What the recorder does with each record the rings hand it while
// recording: decoded (record_decoder.h), its thread noted, its values and
// stack joined to their entry, held in the reorder window until it is old
// enough to be written in time order. Owns all the state that grows with
// the recording, so that the recorder's stages own only their own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <vector>

#include "record/late_arrivals.h"
#include "record/module_watch.h"
#include "record/process_info.h"
#include "record/record_decoder.h"
#include "record/record_plan.h"
#include "record/reorder.h"
#include "record/thread_table.h"

namespace atrace {

class EventCollector {
 public:
  // `select`: --select's selectors (late_arrivals.h).
  EventCollector(const RecordPlan& plan, const std::vector<WatchedModule>& watched,
                 const std::vector<uprobes::Selector>& select);
  // One record from the rings or lanes.
  void on_record(const void* data, size_t size);
  // Called on each filter hint record (relevance.h).
  std::function<void()> on_hint;
  // Called on each thread creation and end as it is decoded (fast_path.h).
  std::function<void(const formats::Event&)> on_thread_event;
  // An event that did not come through the rings (the fast path's).
  void add_event(formats::Event&& ev);

  Reorderer& held() { return reorder_; }
  ThreadTable& threads() { return threads_; }
  // The traced processes: each noted when its first event arrives or a
  // traced process forks it (the recorder notes those it attaches to or
  // launches itself, before any event).
  ProcessTable& processes() { return processes_; }
  uint64_t events() const { return events_; }
  // Function entries and USDT hits among them: 0 with probes in place
  // says that none fired (a library loaded from another file...).
  uint64_t hits() const { return hits_; }
  uint64_t last_event_ts() const { return last_event_ts_; }
  // CLOCK_MONOTONIC when the first event arrived (0: none yet): how long
  // the first one took to reach atrace (`record -v`, "first event").
  uint64_t first_event_at() const { return first_event_at_; }
  // The end's warnings: modules never seen, values and stacks that came
  // after their call was written.
  void warn() const;

 private:
  RecordDecoder decoder_;
  LateArrivals late_;  // modules waited for: did they arrive?
  ThreadTable threads_;
  ProcessTable processes_;
  Reorderer reorder_;
  uint64_t events_ = 0;
  uint64_t hits_ = 0;
  // Values and stack records whose event had already left the reorder
  // window.
  uint64_t values_late_ = 0, stacks_late_ = 0;
  uint64_t last_event_ts_ = 0;
  uint64_t first_event_at_ = 0;
};

}  // namespace atrace
