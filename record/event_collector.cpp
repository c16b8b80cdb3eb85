#include "record/event_collector.h"

#include <time.h>

#include <algorithm>

#include "base/clock.h"
#include "base/diagnostics.h"
#include "record/func_values.h"
#include "record/stack_joiner.h"

namespace atrace {

EventCollector::EventCollector(const RecordPlan& plan, const std::vector<WatchedModule>& watched,
                               const std::vector<uprobes::Selector>& select)
    : decoder_(plan.usdt, watched, plan.values),
      late_(plan.modules, plan.sites, plan.usdt, select) {}

void EventCollector::on_record(const void* data, size_t size) {
  DecodedRecord r = decoder_.decode(data, size);
  if (r.type == DecodedRecord::Type::FilterHint && on_hint) on_hint();
  if (r.type == DecodedRecord::Type::Values && !join_values(reorder_, std::move(r.event)))
    ++values_late_;
  if (r.type == DecodedRecord::Type::Stack && !join_stack(reorder_, std::move(r.event)))
    ++stacks_late_;
  if (r.type == DecodedRecord::Type::LinkMap)
    late_.link_map_changed(static_cast<pid_t>(r.event.pid));
  if (r.type != DecodedRecord::Type::Event) return;
  hits_ +=
      r.event.kind == formats::EventKind::FuncEntry || r.event.kind == formats::EventKind::Usdt;
  if (!first_event_at_) first_event_at_ = now_ns(CLOCK_MONOTONIC);
  const bool new_thread =
      r.names_thread ? threads_.named(r.event, r.thread_name) : threads_.saw(r.event);
  // A process is read from /proc once, as soon as it is known: a short
  // one may be gone by the time its first event is drained.
  if (new_thread && r.event.tid) processes_.note(static_cast<pid_t>(r.event.pid));
  if (r.event.kind == formats::EventKind::ProcFork && !(r.event.flags & formats::kForkThread))
    processes_.note(static_cast<pid_t>(r.event.arg0));
  if (on_thread_event && (r.event.kind == formats::EventKind::ProcFork ||
                          r.event.kind == formats::EventKind::ProcExec ||
                          r.event.kind == formats::EventKind::ProcExit ||
                          r.event.kind == formats::EventKind::ThreadExit))
    on_thread_event(r.event);
  last_event_ts_ = std::max(last_event_ts_, r.event.ts);
  late_.saw(r.event);
  reorder_.push(std::move(r.event));
  ++events_;
}

void EventCollector::add_event(formats::Event&& ev) {
  hits_ += ev.kind == formats::EventKind::FuncEntry;
  if (!first_event_at_) first_event_at_ = now_ns(CLOCK_MONOTONIC);
  threads_.saw(ev);
  last_event_ts_ = std::max(last_event_ts_, ev.ts);
  reorder_.push(std::move(ev));
  ++events_;
}

void EventCollector::warn() const {
  for (const auto& line : late_.never_seen()) base::progress("%s", line.c_str());
  if (values_late_)
    base::warning(
        "the arguments or return values of %llu call(s) arrived after "
        "the call was written, and are missing",
        static_cast<unsigned long long>(values_late_));
  if (stacks_late_)
    base::warning(
        "the call stacks of %llu call(s) arrived after the call was "
        "written, and are missing",
        static_cast<unsigned long long>(stacks_late_));
}

}  // namespace atrace
