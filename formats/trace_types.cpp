// Names of the trace vocabulary's enums, as `atrace info`, `atrace script`
// and the reports print them. Kept stable: scripts parse them.
#include "formats/trace_types.h"

namespace atrace::formats {

const char* to_string(EventKind k) {
  switch (k) {
    case EventKind::FuncEntry: return "entry";
    case EventKind::FuncExit: return "exit";
    case EventKind::ThreadExit: return "thread-exit";
    case EventKind::SchedSwitchOut: return "switch-out";
    case EventKind::SchedSwitchIn: return "switch-in";
    case EventKind::SchedWakeup: return "wakeup";
    case EventKind::SchedMigrate: return "migrate";
    case EventKind::SyscallEnter: return "syscall";
    case EventKind::SyscallExit: return "syscall-exit";
    case EventKind::PageFault: return "fault";
    case EventKind::ProcFork: return "fork";
    case EventKind::ProcExec: return "exec";
    case EventKind::ProcExit: return "proc-exit";
    case EventKind::Comm: return "comm";
    case EventKind::Detach: return "detach";
    case EventKind::Usdt: return "usdt";
    case EventKind::Unwind: return "unwind";
    case EventKind::ModuleLoad: return "module";
    case EventKind::ModuleUnload: return "module-unload";
    case EventKind::Gap: return "lost";
  }
  return "unknown";
}

const char* to_string(UnwindHow h) {
  switch (h) {
    case UnwindHow::Caught: return "caught";
    case UnwindHow::ThreadExit: return "thread-exit";
    case UnwindHow::StackSwitch: return "stack-switch";
    case UnwindHow::Abandoned: return "abandoned";
    case UnwindHow::NestingLimit: return "nesting-limit";
  }
  return "unknown";
}

const char* to_string(ProbeKind k) {
  switch (k) {
    case ProbeKind::Function: return "function";
    case ProbeKind::Usdt: return "usdt";
    case ProbeKind::Interval: return "interval";
  }
  return "unknown";
}

const char* to_string(ProbePath p) {
  switch (p) {
    case ProbePath::SingleStep: return "single-step";
    case ProbePath::Emulated: return "emulated";
    case ProbePath::Nop5: return "nop5";
    case ProbePath::Refused: return "refused";
    case ProbePath::Unknown: break;
  }
  return "unknown";
}

std::string probe_place(ProbePath path, uint64_t entry_delta) {
  return "+" + std::to_string(entry_delta) + " " + to_string(path);
}

const char* to_string(DetachReason r) {
  switch (r) {
    case DetachReason::Absolute: return "absolute";
    case DetachReason::Relative: return "relative";
    case DetachReason::MaxCalls: return "max-calls";
    case DetachReason::User: return "user";
    case DetachReason::Budget: return "budget";
  }
  return "unknown";
}

namespace {
uint64_t by_path(ProbePath p, uint64_t nop5, uint64_t emulated, uint64_t single_step) {
  switch (p) {
    case ProbePath::Nop5: return nop5;
    case ProbePath::Emulated: return emulated;
    case ProbePath::SingleStep: return single_step;
    default: return 0;
  }
}
}  // namespace

uint64_t ProbeCosts::of(ProbePath p) const { return by_path(p, nop5, emulated, single_step); }

uint64_t ProbeCosts::inside_of(ProbePath p) const {
  return by_path(p, inside_nop5, inside_emulated, inside_single_step);
}

uint64_t ProbeCosts::cost_or_typical(ProbePath p) const {
  const ProbePath as = p == ProbePath::Unknown ? ProbePath::Emulated : p;
  const uint64_t typical = as == ProbePath::SingleStep ? 15000
                           : as == ProbePath::Emulated ? 1000
                           : as == ProbePath::Nop5     ? 650
                                                       : 0;
  return of(as) ? of(as) : typical;
}

uint64_t ProbeCosts::floor_of(ProbePath p) const {
  const uint64_t inside = inside_of(p == ProbePath::Unknown ? ProbePath::Emulated : p);
  return inside ? inside : cost_or_typical(p) / 2;
}

ProbeCosts probe_costs(const TraceHeader& h) {
  return {h.probe_cost_nop5_ns,   h.probe_cost_emulated_ns,   h.probe_cost_singlestep_ns,
          h.probe_inside_nop5_ns, h.probe_inside_emulated_ns, h.probe_inside_singlestep_ns};
}

void set_probe_costs(TraceHeader& h, const ProbeCosts& c) {
  h.probe_cost_nop5_ns = c.nop5;
  h.probe_cost_emulated_ns = c.emulated;
  h.probe_cost_singlestep_ns = c.single_step;
  h.probe_inside_nop5_ns = c.inside_nop5;
  h.probe_inside_emulated_ns = c.inside_emulated;
  h.probe_inside_singlestep_ns = c.inside_single_step;
}

}  // namespace atrace::formats

namespace atrace::formats {

// The build id rides in the event's argument list (one string) rather than
// in a field of its own, so that every other event stays as small as it was.
const std::string& module_build_id(const Event& ev) {
  static const std::string none;
  const bool module = ev.kind == EventKind::ModuleLoad || ev.kind == EventKind::ModuleUnload;
  if (!module || ev.args.empty() || !ev.args.front().is_string) return none;
  return ev.args.front().str;
}

void set_module_build_id(Event& ev, const std::string& build_id) {
  ProbeArg a;
  a.is_string = true;
  a.size = 0;
  a.str = build_id;
  ev.args.clear();
  ev.args.push_back(std::move(a));
}

}  // namespace atrace::formats
