// The flow graph's collection: values through the replay's calls, bytes
// through the messages' pairing, wake-ups through the waker's stack at the
// time of the wake-up (flow_graph.h has the rules).
#include "analysis/flow_graph.h"

#include <algorithm>

namespace atrace::analysis {
namespace {

// A recorded value that may be a hand-off: an integer recorded as a pointer
// or in hex, not 0.
bool handle(const formats::ProbeArg& a) {
  return !a.is_string && a.value != 0 &&
         (a.format == formats::ArgFormat::Pointer || a.format == formats::ArgFormat::Hex);
}

}  // namespace

const char* to_string(FlowKind k) {
  switch (k) {
    case FlowKind::Value: return "value";
    case FlowKind::Bytes: return "bytes";
    case FlowKind::Wakeup: return "wakeup";
  }
  return "?";
}

FlowCollector::FlowCollector(CallReplay& replay, const std::vector<formats::HostClocks>& hosts,
                             const std::string& kernel_events)
    : replay_(replay), machines_(host_machines(hosts)) {
  replay.listen(*this);
  // A merged trace's header lists the groups of every recording.
  bytes_ = kernel_events.find("net") != std::string::npos || hosts.size() > 1;
  wakeups_ = kernel_events.find("sched") != std::string::npos;
}

void FlowCollector::add(const FlowEnd& from, const FlowEnd& to, FlowKind kind, uint64_t bytes,
                        uint64_t wait_ns) {
  FlowStats& s = edges_[{from, to, kind}];
  s.count++;
  s.bytes += bytes;
  s.wait_ns += wait_ns;
}

void FlowCollector::on_call_begin(const ReplayThread& t, const OpenCall& c) {
  const FlowEnd here = end_of(t, c.id);
  if (t.stack.size() >= 2) calls_[{end_of(t, t.stack[t.stack.size() - 2].id), here}]++;
  for (const auto& a : c.args) {
    if (!handle(a)) continue;
    values_ = true;
    auto it = producers_.find({t.host, t.pid, a.value});
    if (it != producers_.end()) add(it->second, here, FlowKind::Value, 0, 0);
  }
}

void FlowCollector::on_call_end(const ReplayThread& t, const ClosedCall& c) {
  const FlowEnd here = end_of(t, c.id);
  if (timed(c.how)) {
    const uint64_t off = c.self_kernel.offcpu_ns();
    work_[here] += c.self_ns > off ? c.self_ns - off : 0;
  }
  if (c.how != CallEnd::Returned || !c.ret) return;
  for (const auto& a : *c.ret) {
    if (a.slot != formats::kArgRetval || !handle(a)) continue;
    values_ = true;
    producers_[{t.host, t.pid, a.value}] = here;
  }
}

void FlowCollector::on_interval_open(const ReplayThread& t, const KernelInterval& i) {
  if (i.kind == IntervalKind::OffCpu) asleep_since_[formats::thread_key(t.host, t.tid)] = i.start;
}

void FlowCollector::on_interval_close(const ReplayThread& t, const KernelInterval& i,
                                      const IntervalClose&) {
  if (i.kind == IntervalKind::OffCpu) asleep_since_.erase(formats::thread_key(t.host, t.tid));
}

void FlowCollector::on_event(const formats::Event& ev, const ReplayThread* t) {
  if (!t) return;
  using K = formats::EventKind;
  if (ev.kind == K::Message) {
    Message m;
    m.end = message_end(ev, machines_);
    m.traced = !t->stack.empty();
    if (m.traced) m.at = end_of(*t, t->stack.back().id);
    messages_.push_back(std::move(m));
    return;
  }
  if (ev.kind != K::SchedWakeup) return;
  // The event is in the woken thread's stream; arg0 names the thread that
  // was running when it was woken (0: an interrupt with nothing of ours).
  const auto& threads = replay_.threads();
  auto waker = ev.arg0 ? threads.find(formats::thread_key(ev.host, static_cast<uint32_t>(ev.arg0)))
                       : threads.end();
  if (waker == threads.end()) {
    left_.wakeups_unknown++;
    return;
  }
  if (waker->second.stack.empty() || t->stack.empty()) {
    left_.wakeups_untraced++;
    return;
  }
  auto since = asleep_since_.find(formats::thread_key(t->host, t->tid));
  const uint64_t wait =
      since != asleep_since_.end() && ev.ts > since->second ? ev.ts - since->second : 0;
  add(end_of(waker->second, waker->second.stack.back().id), end_of(*t, t->stack.back().id),
      FlowKind::Wakeup, 0, wait);
}

FlowGraph FlowCollector::result() {
  std::vector<MessageEnd> ends;
  ends.reserve(messages_.size());
  uint64_t receives = 0;
  for (const auto& m : messages_) {
    ends.push_back(m.end);
    receives += m.end.m.recv;
  }
  const auto matches = match_messages(ends);
  left_.messages_unmatched = receives - matches.size();
  for (const auto& p : matches) {
    const Message& s = messages_[p.send];
    const Message& r = messages_[p.recv];
    if (!s.traced || !r.traced) {
      left_.messages_untraced++;
      continue;
    }
    add(s.at, r.at, FlowKind::Bytes, p.bytes, 0);
  }
  if (!messages_.empty()) bytes_ = true;

  FlowGraph g;
  for (const auto& [k, s] : edges_)
    g.edges.push_back({std::get<0>(k), std::get<1>(k), std::get<2>(k), s});
  for (const auto& [k, n] : calls_) g.calls.push_back({k.first, k.second, FlowKind::Value, {n}});
  g.work_ns = std::move(work_);
  g.left_out = left_;
  g.values_recorded = values_;
  g.bytes_recorded = bytes_;
  g.wakeups_recorded = wakeups_;
  return g;
}

}  // namespace atrace::analysis
