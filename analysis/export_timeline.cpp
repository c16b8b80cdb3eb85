// Timeline, TraceNames and the instants of the timeline exporters
// (export_timeline.h). The spans are the call replay's calls and kernel
// intervals (call_replay.h), as the profile's are, so that what a viewer
// draws adds up to what `atrace report` says; the integration tests compare
// the two on real recordings.
#include "analysis/export_timeline.h"

#include <algorithm>

#include "analysis/function_names.h"
#include "analysis/process_text.h"
#include "analysis/syscall_names.h"

namespace atrace::analysis {

namespace {

SpanEnd span_end(CallEnd how) {
  switch (how) {
    case CallEnd::Returned: return SpanEnd::Closed;
    case CallEnd::Abandoned: return SpanEnd::Abandoned;
    case CallEnd::Untimed: return SpanEnd::Untimed;
    case CallEnd::Unwound: return SpanEnd::Unwound;
    case CallEnd::ThreadExit:
    case CallEnd::Exec: return SpanEnd::ThreadExit;
    case CallEnd::TraceEnd:
    case CallEnd::Gap: break;  // its end is unknown, as at the end
  }
  return SpanEnd::TraceEnd;
}

SpanEnd span_end(IntervalEnd how) {
  switch (how) {
    case IntervalEnd::Closed: return SpanEnd::Closed;
    case IntervalEnd::Repaired: return SpanEnd::Repaired;
    case IntervalEnd::ThreadExit: return SpanEnd::ThreadExit;
    case IntervalEnd::TraceEnd: break;
  }
  return SpanEnd::TraceEnd;
}

Span span_of(const KernelInterval& i) {
  Span s;
  s.kind = i.kind == IntervalKind::Syscall ? SpanKind::Syscall : SpanKind::OffCpu;
  s.nr = i.nr;
  s.state = i.state;
  s.start = i.start;
  return s;
}

}  // namespace

Timeline::Timeline(TimelineSink& sink)
    : own_(std::make_unique<CallReplay>(std::vector<formats::ProbeInfo>{})),
      replay_(*own_),
      sink_(sink) {
  replay_.listen(*this);
}

Timeline::Timeline(CallReplay& replay, TimelineSink& sink) : replay_(replay), sink_(sink) {
  replay_.listen(*this);
}

bool Timeline::add(const formats::Event& ev) {
  own_->add(ev);
  return span_boundary(ev);
}

bool Timeline::span_boundary(const formats::Event& ev) {
  using K = formats::EventKind;
  if (ev.tid == 0) return false;  // the recorder's (DETACH): no thread
  switch (ev.kind) {
    case K::FuncEntry:
    case K::FuncExit:
    case K::Unwind:
    case K::SyscallEnter:
    case K::SyscallExit:
    case K::SchedSwitchOut:
    case K::SchedSwitchIn: return true;
    default: return false;
  }
}

void Timeline::on_call_begin(const ReplayThread& t, const OpenCall& c) {
  if (t.tid == 0) return;
  if (t.index >= frames_.size()) frames_.resize(t.index + 1);
  Span s;
  s.kind = SpanKind::Function;
  s.id = c.id;
  s.start = c.start;
  frames_[t.index].push_back(Frame{s, false, c.args});
  s.args = &frames_[t.index].back().args;
  sink_.begin(shown_id(t.host, t.pid), shown_id(t.host, t.tid), s);
}

void Timeline::end(const ReplayThread& t, Frame& f, const SpanClose& c) {
  if (f.drawn) return;
  f.drawn = true;
  SpanClose at = c;
  at.ts = std::max(c.ts, f.span.start);  // a span never ends before it began
  Span s = f.span;
  s.args = &f.args;
  sink_.end(shown_id(t.host, t.pid), shown_id(t.host, t.tid), s, at);
}

void Timeline::on_call_end(const ReplayThread& t, const ClosedCall& c) {
  if (t.tid == 0) return;
  auto& frames = frames_[t.index];
  // An unwound call below the top: the calls above it end with it.
  for (size_t i = frames.size(); i-- > c.index + 1;)
    end(t, frames[i], SpanClose{c.end, SpanEnd::Unwound});
  SpanClose close{c.end, span_end(c.how)};
  close.values = c.ret;
  end(t, frames[c.index], close);
  frames.erase(frames.begin() + static_cast<std::ptrdiff_t>(c.index));
}

void Timeline::on_interval_open(const ReplayThread& t, const KernelInterval& i) {
  if (t.tid != 0) sink_.begin(shown_id(t.host, t.pid), shown_id(t.host, t.tid), span_of(i));
}

void Timeline::on_interval_close(const ReplayThread& t, const KernelInterval& i,
                                 const IntervalClose& c) {
  if (t.tid == 0) return;
  Span s = span_of(i);
  SpanClose at{std::max(c.ts, s.start), span_end(c.how), c.has_ret, c.ret};
  sink_.end(shown_id(t.host, t.pid), shown_id(t.host, t.tid), s, at);
}

TraceNames::TraceNames(const formats::TraceHeader& header,
                       const std::vector<formats::ProbeInfo>& probes,
                       const std::vector<formats::ThreadInfo>& threads, bool long_names)
    : target_pid_(header.target_pid) {
  const FunctionNames shown(probes, long_names);
  for (const auto& p : probes) functions_[p.id] = Function{shown.of(p.name, p.module), p.module};
  for (const auto& t : threads) threads_[shown_id(t.host, t.tid)] = t.name;
  // The program's file name: the first word of its command line.
  std::string cmd = header.target_command.substr(0, header.target_command.find(' '));
  target_name_ = cmd.substr(cmd.rfind('/') == std::string::npos ? 0 : cmd.rfind('/') + 1);
}

const std::string& TraceNames::function(uint32_t id) {
  auto [it, fresh] = functions_.try_emplace(id);
  if (fresh) it->second.name = "<probe " + std::to_string(id) + ">";
  return it->second.name;
}

const std::string& TraceNames::module(uint32_t id) {
  function(id);
  return functions_[id].module;
}

const std::string& TraceNames::thread(uint32_t tid) const {
  static const std::string kNone;
  auto it = threads_.find(tid);
  return it == threads_.end() ? kNone : it->second;
}

std::string TraceNames::process(uint32_t pid) const {
  auto tag = process_tags_.find(pid);
  const std::string tail = tag == process_tags_.end() ? "" : tag->second;
  const std::string head = hosts_.empty() ? "" : host(host_of_shown(pid)) + ": ";
  const std::string& main = thread(pid);
  if (!main.empty()) return head + main + tail;
  // The header's program is the first recording's.
  if (pid == target_pid_ && !target_name_.empty()) return head + target_name_ + tail;
  return head + "pid " + std::to_string(real_id(pid)) + tail;
}

void TraceNames::set_processes(const std::vector<formats::ProcessInfo>& processes) {
  for (const auto& p : processes)
    if (auto tag = process_tag(p); !tag.empty())
      process_tags_[shown_id(p.host, p.pid)] = std::move(tag);
}

void TraceNames::set_hosts(const std::vector<formats::HostClocks>& hosts) {
  hosts_ = host_labels(hosts);
}

std::string TraceNames::host(uint16_t h) const {
  if (hosts_.empty()) return "";
  return h < hosts_.size() ? hosts_[h] : "host" + std::to_string(h);
}

const std::string& TraceNames::syscall(uint64_t nr) {
  auto [it, fresh] = syscall_names_.try_emplace(nr);
  if (fresh) it->second = syscall_name(nr);
  return it->second;
}

const std::string& TraceNames::span(const Span& s) {
  static const std::string kBlocked = "off-cpu (blocked)", kRunnable = "off-cpu (runnable)";
  switch (s.kind) {
    case SpanKind::Function: return function(s.id);
    case SpanKind::OffCpu: return s.blocked() ? kBlocked : kRunnable;
    case SpanKind::Syscall: break;
  }
  auto [it, fresh] = syscalls_.try_emplace(s.nr);
  if (fresh) it->second = "syscall:" + syscall(s.nr);
  return it->second;
}

namespace {

void add_arg(Instant& out, const char* key, InstantArg::Type type, uint64_t value,
             std::string text = {}) {
  out.args.push_back(InstantArg{key, type, value, std::move(text)});
}

}  // namespace

void describe_instant(const formats::Event& ev, TraceNames& names, Instant& out) {
  using K = formats::EventKind;
  using T = InstantArg::Type;
  out.args.clear();
  out.global = false;
  out.category = "kernel";
  out.name = formats::to_string(ev.kind);
  switch (ev.kind) {
    case K::PageFault:
      add_arg(out, "address", T::Hex, ev.arg0);
      add_arg(out, "ip", T::Hex, ev.arg1);
      add_arg(out, "access", T::Text, 0, ev.flags & formats::kFaultWrite ? "write" : "read");
      return;
    case K::SchedWakeup:
      add_arg(out, "waker_tid", T::Uint, ev.arg0);
      add_arg(out, "target_cpu", T::Uint, ev.arg1);
      return;
    case K::SchedMigrate:
      add_arg(out, "orig_cpu", T::Uint, ev.arg0);
      add_arg(out, "dest_cpu", T::Uint, ev.arg1);
      return;
    case K::ProcFork:
      add_arg(out, "child_pid", T::Uint, ev.arg0);
      add_arg(out, "child_tid", T::Uint, ev.arg1);
      add_arg(out, "what", T::Text, 0, ev.flags & formats::kForkThread ? "thread" : "process");
      return;
    case K::ProcExec: add_arg(out, "filename", T::Text, 0, ev.text); return;
    case K::ProcExit: add_arg(out, "status", T::Int, ev.arg0); return;
    case K::Comm: add_arg(out, "name", T::Text, 0, ev.text); return;
    case K::ThreadExit: return;
    case K::Detach: {
      out.category = "atrace";
      out.global = true;
      out.name = "detach: " + names.function(ev.id);
      add_arg(out, "function", T::Text, 0, names.function(ev.id));
      add_arg(out, "module", T::Text, 0, names.module(ev.id));
      add_arg(out, "rule", T::Text, 0, formats::to_string(formats::detach_reason(ev.flags)));
      add_arg(out, "calls", T::Uint, ev.arg0);
      add_arg(out, "total_ns", T::Uint, ev.arg1);
      add_arg(out, "mean_ns", T::Uint, ev.arg0 ? ev.arg1 / ev.arg0 : 0);
      return;
    }
    case K::Usdt:
      // "provider:name" with the probe's arguments, numbered from 1 as
      // `atrace script` prints them.
      out.category = "usdt";
      out.name = names.function(ev.id);
      for (size_t i = 0; i < ev.args.size(); ++i) {
        const formats::ProbeArg& a = ev.args[i];
        std::string key = "arg" + std::to_string(i + 1);
        if (a.is_string) add_arg(out, "", T::Text, 0, a.str);
        else add_arg(out, "", a.is_signed ? T::Int : T::Uint, a.value);
        out.args.back().key = std::move(key);
      }
      return;
    default: break;
  }
  // A kind this exporter does not know in detail: its raw fields.
  out.category = "other";
  if (ev.id) add_arg(out, "id", T::Uint, ev.id);
  if (ev.arg0) add_arg(out, "arg0", T::Uint, ev.arg0);
  if (ev.arg1) add_arg(out, "arg1", T::Uint, ev.arg1);
  if (!ev.text.empty()) add_arg(out, "text", T::Text, 0, ev.text);
}

}  // namespace atrace::analysis
