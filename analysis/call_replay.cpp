// CallReplay: the stacks, the kernel state and the rules of call_replay.h.
// They exist so that no view ever shows a negative self time or a total
// longer than the recording, and so that every view counts the same calls.
#include "analysis/call_replay.h"

#include <algorithm>

namespace atrace::analysis {

namespace {
// Ids above this go to a hash map: a damaged or hostile file must not make
// the dense table huge.
constexpr uint32_t kMaxDenseId = 1u << 20;
}  // namespace

CallReplay::CallReplay(const std::vector<formats::ProbeInfo>& probes) {
  uint32_t max_id = 0;
  for (const auto& p : probes) {
    paths_[p.id] = p.path_kind;
    if (p.id < kMaxDenseId) max_id = std::max(max_id, p.id);
  }
  dense_slot_.assign(static_cast<size_t>(max_id) + 1, 0);
}

uint32_t CallReplay::slot_of(uint32_t id) {
  uint32_t* known = nullptr;
  if (id < dense_slot_.size()) {
    known = &dense_slot_[id];
    if (*known) return *known - 1;
  } else {
    auto it = sparse_slot_.find(id);
    if (it != sparse_slot_.end()) return it->second;
  }
  auto slot = static_cast<uint32_t>(slot_ids_.size());
  slot_ids_.push_back(id);
  if (known) *known = slot + 1;
  else sparse_slot_.emplace(id, slot);
  return slot;
}

ReplayThread& CallReplay::thread(const formats::Event& ev) {
  const uint64_t tid = formats::thread_key(ev);
  // Events come in runs of one thread: remember the last one.
  if (last_thread_ && last_tid_ == tid) return *last_thread_;
  auto [it, fresh] = threads_.try_emplace(tid);
  ReplayThread& t = it->second;
  if (fresh) {
    t.tid = ev.tid;
    t.host = ev.host;
    t.index = static_cast<uint32_t>(threads_.size() - 1);
    Forward& f = forwards_[tid];
    f.replay = this;
    f.owner = &t;
    t.kernel.report_to(&f);
  }
  last_tid_ = tid;
  last_thread_ = &t;
  return t;
}

void CallReplay::Forward::opened(const KernelInterval& i) {
  for (auto* l : replay->listeners_) l->on_interval_open(*owner, i);
}

void CallReplay::Forward::closed(const KernelInterval& i, const IntervalClose& c) {
  for (auto* l : replay->listeners_) l->on_interval_close(*owner, i, c);
}

std::optional<size_t> CallReplay::find(const ReplayThread& t, uint32_t slot) const {
  for (size_t i = t.stack.size(); i-- > 0;)
    if (t.stack[i].slot == slot) return i;
  return std::nullopt;
}

std::optional<size_t> CallReplay::find_started(const ReplayThread& t, uint32_t slot,
                                               uint64_t start) const {
  for (size_t i = t.stack.size(); i-- > 0;)
    if (t.stack[i].slot == slot && t.stack[i].start == start) return i;
  return std::nullopt;
}

const char* untimed_text(UntimedReason r) {
  switch (r) {
    case UntimedReason::NestingLimit: return "past the kernel's 64 nested return probes";
    case UntimedReason::StackSwitch: return "the thread switched stacks";
    case UntimedReason::GivenBack: return "return address given back to a stack walk";
    case UntimedReason::None: break;
  }
  return "";
}

const char* to_string(UntimedReason r) {
  switch (r) {
    case UntimedReason::NestingLimit: return "nesting-limit";
    case UntimedReason::StackSwitch: return "stack-switch";
    case UntimedReason::GivenBack: return "given-back";
    case UntimedReason::None: break;
  }
  return "";
}

UntimedReason untimed_reason(const formats::Event& ev) {
  if (ev.kind != formats::EventKind::Unwind) return UntimedReason::None;
  switch (static_cast<formats::UnwindHow>(ev.flags)) {
    case formats::UnwindHow::NestingLimit: return UntimedReason::NestingLimit;
    case formats::UnwindHow::StackSwitch: return UntimedReason::StackSwitch;
    case formats::UnwindHow::GivenBack: return UntimedReason::GivenBack;
    default: return UntimedReason::None;
  }
}

void CallReplay::close_above(ReplayThread& t, size_t index, uint64_t ts) {
  while (t.stack.size() > index + 1)
    close_top(
        t, ts,
        t.stack.back().untimed != UntimedReason::None ? CallEnd::Untimed : CallEnd::Abandoned);
}

void CallReplay::close_open(ReplayThread& t, uint64_t ts, CallEnd how) {
  while (!t.stack.empty())
    close_top(t, ts, t.stack.back().untimed != UntimedReason::None ? CallEnd::Untimed : how);
}

void CallReplay::inherit(const ReplayThread& parent, const formats::Event& fork) {
  if (parent.stack.empty()) return;
  std::vector<OpenCall> copy = parent.stack;
  // The child's kernel totals start at the fork.
  for (auto& c : copy) {
    c.kernel_at_entry = {};
    c.self_kernel = {};
  }
  inherited_[formats::thread_key(fork.host, static_cast<uint32_t>(fork.arg1))] = std::move(copy);
}

bool CallReplay::take_inherited(ReplayThread& t, uint32_t slot, uint64_t ts) {
  auto it = inherited_.find(formats::thread_key(t.host, t.tid));
  if (it == inherited_.end()) return false;
  std::vector<OpenCall>& copy = it->second;
  size_t k = copy.size();
  while (k > 0 && copy[k - 1].slot != slot) --k;
  if (k == 0) return false;
  // The child's own calls were inside the copied ones: left unreturned.
  close_open(t, ts, CallEnd::Abandoned);
  for (size_t i = 0; i < k; ++i) {
    t.stack.push_back(std::move(copy[i]));
    const uint32_t s = t.stack.back().slot;
    if (s >= t.active.size()) t.active.resize(s + 1, 0);
    t.active[s]++;
    for (auto* l : listeners_) l->on_call_begin(t, t.stack.back());
  }
  inherited_.erase(it);  // those above the returned one never return in it
  return true;
}

void CallReplay::add(const formats::Event& ev) {
  last_ts_ = std::max(last_ts_, ev.ts);
  if (ev.kind == formats::EventKind::Detach) {  // the recording's, not a thread's
    for (auto* l : listeners_) l->on_event(ev, nullptr);
    return;
  }
  ReplayThread& t = thread(ev);
  if (t.events++ == 0) t.first_ts = t.last_ts = ev.ts;
  const uint64_t before_this = t.last_ts;
  t.last_ts = std::max(t.last_ts, ev.ts);
  t.pid = ev.pid;
  if (ev.cpu >= t.cpus.size()) t.cpus.resize(ev.cpu + size_t{1}, false);
  t.cpus[ev.cpu] = true;

  switch (ev.kind) {
    case formats::EventKind::FuncEntry: {
      if (t.kernel.pending()) user_code(t, ev.ts);
      uint32_t slot = slot_of(ev.id);
      t.stack.push_back(OpenCall{ev.id, slot, ev.ts, 0, t.kernel.totals(), {}, 0, ev.args});
      if (slot >= t.active.size()) t.active.resize(slot + 1, 0);
      t.active[slot]++;
      for (auto* l : listeners_) l->on_call_begin(t, t.stack.back());
      break;
    }
    case formats::EventKind::FuncExit: {
      if (t.kernel.pending()) user_code(t, ev.ts);
      auto match = find(t, slot_of(ev.id));
      if (!match && take_inherited(t, slot_of(ev.id), ev.ts)) match = t.stack.size() - 1;
      if (!match) {
        orphan_exits_++;  // its entry happened before the recording started, or was lost
        break;
      }
      // Calls above the match were left without their exit: they end here.
      close_above(t, *match, ev.ts);
      close_top(t, ev.ts, CallEnd::Returned, &ev.args);
      break;
    }
    case formats::EventKind::Unwind: {
      if (t.kernel.pending()) user_code(t, ev.ts);
      const uint32_t slot = slot_of(ev.id);
      // Named by its entry's time (the recorder's stack-pointer rule), or
      // the innermost of its function (an exception's Unwind).
      auto match = ev.arg0 ? find_started(t, slot, ev.arg0) : find(t, slot);
      if (!match) break;
      const UntimedReason why = untimed_reason(ev);
      if (why != UntimedReason::None) {
        t.stack[*match].untimed = why;
        close(t, *match, ev.ts, CallEnd::Untimed);
      } else if (static_cast<formats::UnwindHow>(ev.flags) == formats::UnwindHow::Abandoned) {
        close(t, *match, ev.ts, CallEnd::Abandoned);
      } else {
        close(t, *match, ev.ts, CallEnd::Unwound);
      }
      break;
    }
    case formats::EventKind::Gap: {
      // Whatever was open may have ended in the hole: its end is unknown,
      // at least the thread's last event before it.
      if (t.kernel.pending()) user_code(t, ev.ts);
      t.gaps++;
      t.lost += ev.arg0;
      close_open(t, before_this, CallEnd::Gap);
      break;
    }
    case formats::EventKind::ThreadExit: {
      // Its open system call first: exit() inside it belongs to the calls.
      KernelTimes before = t.kernel.totals();
      syscall(t.kernel.exit(ev.ts));
      add_self_kernel(t, before);
      close_open(t, ev.ts, CallEnd::ThreadExit);
      break;
    }
    case formats::EventKind::ProcFork:
      if (!(ev.flags & formats::kForkThread)) inherit(t, ev);
      kernel_event(t, ev);
      break;
    case formats::EventKind::ProcExec:
      close_open(t, ev.ts, CallEnd::Exec);
      inherited_.erase(formats::thread_key(ev));
      kernel_event(t, ev);
      break;
    default:
      // USDT and kinds newer than this code: no call, no kernel interval.
      if (formats::is_kernel_kind(ev.kind)) kernel_event(t, ev);
      break;
  }
  for (auto* l : listeners_) l->on_event(ev, &t);
}

// The kernel events move the thread's running totals, which calls read at
// their start and end, and the innermost open call's self numbers.
void CallReplay::kernel_event(ReplayThread& t, const formats::Event& ev) {
  KernelTracker& k = t.kernel;
  KernelTimes before = k.totals();
  switch (ev.kind) {
    case formats::EventKind::SchedSwitchOut: k.switch_out(ev.ts, ev.flags); break;
    case formats::EventKind::SchedSwitchIn: k.switch_in(ev.ts); break;
    case formats::EventKind::SyscallEnter: {
      uint32_t key = t.stack.empty() ? 0 : t.stack.back().slot + 1;
      syscall(k.syscall_enter(ev.ts, ev.arg0, key));
      break;
    }
    case formats::EventKind::SyscallExit:
      syscall(k.syscall_exit(ev.ts, ev.arg0, ev.sarg1()));
      break;
    case formats::EventKind::PageFault: k.fault(ev.ts); break;
    case formats::EventKind::ProcExit: syscall(k.exit(ev.ts)); break;
    case formats::EventKind::Comm: t.comm = ev.text; break;
    default: break;  // wake-ups, migrations, fork, exec: nothing to attribute
  }
  add_self_kernel(t, before);
}

// A function event found an interval open (its closing event was lost).
void CallReplay::user_code(ReplayThread& t, uint64_t ts) {
  KernelTimes before = t.kernel.totals();
  syscall(t.kernel.user_code(ts));
  add_self_kernel(t, before);
}

void CallReplay::syscall(const std::optional<ClosedSyscall>& c) {
  if (c)
    for (auto* l : listeners_) l->on_syscall(*c);
}

// What changed the totals since `before` happened entirely inside the
// innermost open call, not in a callee: no call begins or ends while an
// interval is open (kernel_attribution.h).
void CallReplay::add_self_kernel(ReplayThread& t, const KernelTimes& before) {
  if (!t.stack.empty()) t.stack.back().self_kernel += t.kernel.totals() - before;
}

void CallReplay::close(ReplayThread& t, size_t index, uint64_t ts, CallEnd how,
                       const std::vector<formats::ProbeArg>* ret) {
  OpenCall f = std::move(t.stack[index]);
  t.stack.erase(t.stack.begin() + static_cast<std::ptrdiff_t>(index));
  OpenCall* caller = index > 0 ? &t.stack[index - 1] : nullptr;
  ClosedCall c;
  if (how == CallEnd::Untimed) {
    // No duration: its callees' time goes up to its caller (whose self
    // time it is not), and so does their probe cost.
    c.id = f.id;
    c.slot = f.slot;
    c.index = index;
    c.start = f.start;
    c.end = ts;  // where its thread was seen above it: a bound, not a duration
    c.kernel = t.kernel.totals() - f.kernel_at_entry;
    c.self_kernel = f.self_kernel;
    c.outermost = --t.active[f.slot] == 0;
    c.how = how;
    c.untimed = f.untimed;
    c.args = &f.args;
    if (caller) {
      caller->child_ns += f.child_ns;
      caller->nested_cost += f.nested_cost;
      caller->self_kernel += f.self_kernel;
    }
    for (auto* l : listeners_) l->on_call_end(t, c);
    return;
  }
  uint64_t dur = ts > f.start ? ts - f.start : 0;
  if (costs_.any()) dur = compensated(caller, f, dur);
  c.id = f.id;
  c.slot = f.slot;
  c.index = index;
  c.start = f.start;
  c.end = ts;
  c.dur = dur;
  // Callee times exceed ours only with inconsistent timestamps: clamp.
  c.self_ns = dur > f.child_ns ? dur - f.child_ns : 0;
  // No kernel interval is open here (kernel_attribution.h): exact.
  c.kernel = t.kernel.totals() - f.kernel_at_entry;
  c.self_kernel = f.self_kernel;
  c.outermost = --t.active[f.slot] == 0;
  c.how = how;
  c.args = &f.args;
  c.ret = ret;
  if (caller) caller->child_ns += dur;
  for (auto* l : listeners_) l->on_call_end(t, c);
}

// --compensate, for call `f` just taken off its stack: its duration without
// its probes and those of the calls nested in it (compensation.h), and its
// whole probe cost (and theirs) passed on to its caller.
uint64_t CallReplay::compensated(OpenCall* caller, const OpenCall& f, uint64_t dur) {
  while (slot_cost_.size() <= f.slot) {
    auto path = paths_.find(slot_ids_[slot_cost_.size()]);
    if (path == paths_.end()) {
      slot_cost_.push_back({0, 0});
    } else {
      slot_cost_.push_back({costs_.of(path->second), costs_.inside_of(path->second)});
    }
  }
  const SlotCost& c = slot_cost_[f.slot];
  if (caller) caller->nested_cost += f.nested_cost + c.whole;
  return compensate_duration(dur, c.inside, f.nested_cost, residual_);
}

void CallReplay::finish(uint64_t end_ts) {
  end_ = std::max(end_ts, last_ts_);
  for (auto& [tid, t] : threads_) {
    KernelTimes before = t.kernel.totals();
    syscall(t.kernel.finish(end_));
    add_self_kernel(t, before);
    close_open(t, end_, CallEnd::TraceEnd);
  }
  last_thread_ = nullptr;
}

}  // namespace atrace::analysis
