// Timeline, TraceNames and the instants of the timeline exporters
// (export_timeline.h). The span rules mirror ProfileBuilder and
// KernelTracker (profile.cpp, kernel_attribution.cpp) so that what a viewer
// draws adds up to what `atrace report` says; the integration tests compare
// the two on real recordings.
#include "userspace/export_timeline.h"

#include <algorithm>

#include "userspace/syscall_names.h"

namespace atrace::analysis {

namespace {
// The system calls through which the kernel runs atrace's own probes
// (uretprobe 335, uprobe 336 on x86-64): the probed function's event happens
// inside them, so they would not nest with its span, and they are the
// tracer's cost, not the program's. KernelTracker leaves them out too.
constexpr uint64_t kUretprobeNr = 335, kUprobeNr = 336;
}  // namespace

Timeline::Thread& Timeline::thread(const fmt::Event& ev) {
  if (!last_thread_ || last_tid_ != ev.tid) {
    last_thread_ = &threads_[ev.tid];  // node-based: stays valid
    last_tid_ = ev.tid;
  }
  last_thread_->pid = ev.pid;
  return *last_thread_;
}

size_t Timeline::depth(uint32_t tid) const {
  auto it = threads_.find(tid);
  return it == threads_.end() ? 0 : it->second.frames.size();
}

void Timeline::close(uint32_t tid, Thread& t, const Span& s, const SpanClose& c) {
  SpanClose at = c;
  at.ts = std::max(c.ts, s.start);  // a span never ends before it began
  sink_.end(t.pid, tid, s, at);
}

void Timeline::close_offcpu(uint32_t tid, Thread& t, uint64_t ts, SpanEnd how) {
  if (!t.offcpu) return;
  Span s = *t.offcpu;
  t.offcpu.reset();
  close(tid, t, s, SpanClose{ts, how});
}

void Timeline::close_syscall(uint32_t tid, Thread& t, const SpanClose& c) {
  if (!t.syscall) return;
  close_offcpu(tid, t, c.ts, c.how == SpanEnd::Closed ? SpanEnd::Repaired : c.how);
  Span s = *t.syscall;
  t.syscall.reset();
  close(tid, t, s, c);
}

// The thread runs: an off-CPU period still open lost its switch-in.
void Timeline::running(uint32_t tid, Thread& t, uint64_t ts) {
  close_offcpu(tid, t, ts, SpanEnd::Repaired);
  t.exited = false;  // seen running after its exit: a reused tid
}

// A function event: running, and not inside a system call either.
void Timeline::user_code(uint32_t tid, Thread& t, uint64_t ts) {
  running(tid, t, ts);
  close_syscall(tid, t, SpanClose{ts, SpanEnd::Repaired});
}

void Timeline::close_kernel(uint32_t tid, Thread& t, uint64_t ts, SpanEnd how) {
  close_offcpu(tid, t, ts, how);
  close_syscall(tid, t, SpanClose{ts, how});
}

void Timeline::function_exit(uint32_t tid, Thread& t, const fmt::Event& ev) {
  auto match = std::find_if(t.frames.rbegin(), t.frames.rend(), [&](const Span& f) {
    return f.id == ev.id;
  });
  if (match == t.frames.rend()) return;  // entered before the recording: nothing to draw
  size_t depth = t.frames.size() - 1 - static_cast<size_t>(match - t.frames.rbegin());
  while (t.frames.size() > depth) {
    Span s = t.frames.back();
    t.frames.pop_back();
    bool own = t.frames.size() == depth && ev.kind == fmt::EventKind::FuncExit;
    close(tid, t, s, SpanClose{ev.ts, own ? SpanEnd::Closed : SpanEnd::Unwound});
  }
}

bool Timeline::add(const fmt::Event& ev) {
  using K = fmt::EventKind;
  if (ev.ts > last_ts_) last_ts_ = ev.ts;
  if (ev.kind == K::Detach || ev.tid == 0) return false;  // the recorder's, no thread
  Thread& t = thread(ev);
  const uint32_t tid = ev.tid;
  switch (ev.kind) {
    case K::FuncEntry: {
      user_code(tid, t, ev.ts);
      Span s;
      s.kind = SpanKind::Function;
      s.id = ev.id;
      s.start = ev.ts;
      t.frames.push_back(s);
      sink_.begin(t.pid, tid, s);
      return true;
    }
    case K::FuncExit:
    case K::Unwind:  // the call was unwound: it ends at the catch
      user_code(tid, t, ev.ts);
      function_exit(tid, t, ev);
      return true;
    case K::SyscallEnter: {
      running(tid, t, ev.ts);
      close_syscall(tid, t, SpanClose{ev.ts, SpanEnd::Repaired});  // its exit was lost
      if (ev.arg0 == kUretprobeNr || ev.arg0 == kUprobeNr) return true;
      Span s;
      s.kind = SpanKind::Syscall;
      s.nr = ev.arg0;
      s.start = ev.ts;
      t.syscall = s;
      sink_.begin(t.pid, tid, s);
      return true;
    }
    case K::SyscallExit:
      running(tid, t, ev.ts);
      // An exit with no entry (entered before the recording, or one of the
      // probe system calls) closes nothing.
      close_syscall(tid, t, SpanClose{ev.ts, SpanEnd::Closed, true, ev.sarg1()});
      return true;
    case K::SchedSwitchOut: {
      if (t.exited) return true;  // the dead thread's last switch
      close_offcpu(tid, t, ev.ts, SpanEnd::Repaired);  // its switch-in was lost
      Span s;
      s.kind = SpanKind::OffCpu;
      s.state = ev.flags;
      s.start = ev.ts;
      t.offcpu = s;
      sink_.begin(t.pid, tid, s);
      return true;
    }
    case K::SchedSwitchIn:
      close_offcpu(tid, t, ev.ts, SpanEnd::Closed);
      return true;
    case K::PageFault:
      running(tid, t, ev.ts);
      return false;
    case K::ProcExit:
      // exit_group never returns: it ends here.
      close_kernel(tid, t, ev.ts, SpanEnd::ThreadExit);
      t.exited = true;
      return false;
    case K::ThreadExit:
      close_kernel(tid, t, ev.ts, SpanEnd::ThreadExit);
      while (!t.frames.empty()) {
        Span s = t.frames.back();
        t.frames.pop_back();
        close(tid, t, s, SpanClose{ev.ts, SpanEnd::ThreadExit});
      }
      t.exited = true;
      return false;
    default:
      return false;  // wake-ups, migrations, fork, exec, comm, USDT, kinds unknown here
  }
}

void Timeline::finish(uint64_t end_ts) {
  uint64_t end = std::max(end_ts, last_ts_);
  std::vector<uint32_t> tids;
  for (const auto& [tid, t] : threads_) tids.push_back(tid);
  std::sort(tids.begin(), tids.end());  // the same output on every run
  for (uint32_t tid : tids) {
    Thread& t = threads_[tid];
    close_kernel(tid, t, end, SpanEnd::TraceEnd);
    while (!t.frames.empty()) {
      Span s = t.frames.back();
      t.frames.pop_back();
      close(tid, t, s, SpanClose{end, SpanEnd::TraceEnd});
    }
  }
}

TraceNames::TraceNames(const fmt::TraceHeader& header, const std::vector<fmt::ProbeInfo>& probes,
                       const std::vector<fmt::ThreadInfo>& threads)
    : target_pid_(header.target_pid) {
  for (const auto& p : probes) functions_[p.id] = Function{p.name, p.module};
  for (const auto& t : threads) threads_[t.tid] = t.name;
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
  const std::string& main = thread(pid);
  if (!main.empty()) return main;
  if (pid == target_pid_ && !target_name_.empty()) return target_name_;
  return "pid " + std::to_string(pid);
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

void describe_instant(const fmt::Event& ev, TraceNames& names, Instant& out) {
  using K = fmt::EventKind;
  using T = InstantArg::Type;
  out.args.clear();
  out.global = false;
  out.category = "kernel";
  out.name = fmt::to_string(ev.kind);
  switch (ev.kind) {
    case K::PageFault:
      add_arg(out, "address", T::Hex, ev.arg0);
      add_arg(out, "ip", T::Hex, ev.arg1);
      add_arg(out, "access", T::Text, 0, ev.flags & fmt::kFaultWrite ? "write" : "read");
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
      add_arg(out, "what", T::Text, 0, ev.flags & fmt::kForkThread ? "thread" : "process");
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
      add_arg(out, "rule", T::Text, 0, fmt::to_string(fmt::detach_reason(ev.flags)));
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
        const fmt::ProbeArg& a = ev.args[i];
        std::string key = "arg" + std::to_string(i + 1);
        if (a.is_string)
          add_arg(out, "", T::Text, 0, a.str);
        else
          add_arg(out, "", a.is_signed ? T::Int : T::Uint, a.value);
        out.args.back().key = std::move(key);
      }
      return;
    default:
      break;
  }
  // A kind this exporter does not know in detail: its raw fields.
  out.category = "other";
  if (ev.id) add_arg(out, "id", T::Uint, ev.id);
  if (ev.arg0) add_arg(out, "arg0", T::Uint, ev.arg0);
  if (ev.arg1) add_arg(out, "arg1", T::Uint, ev.arg1);
  if (!ev.text.empty()) add_arg(out, "text", T::Text, 0, ev.text);
}

}  // namespace atrace::analysis
