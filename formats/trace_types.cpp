// Names of the trace vocabulary's enums, as `atrace info`, `atrace script`
// and the reports print them. Kept stable: scripts parse them.
#include "formats/trace_types.h"

#include <cstdio>

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
    case EventKind::Message: return "message";
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
    case UnwindHow::GivenBack: return "given-back";
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
    case ProbePath::Patched: return "patched";
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
    case DetachReason::PatchedInstead: return "patched instead";
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

uint64_t fork_thread_pointer(const Event& ev) {
  if (ev.kind != EventKind::ProcFork || ev.args.empty() || ev.args.front().is_string) return 0;
  return ev.args.front().value;
}

void set_fork_thread_pointer(Event& ev, uint64_t thread_pointer) {
  ev.args.clear();
  if (!thread_pointer) return;
  ProbeArg a;
  a.value = thread_pointer;
  a.format = ArgFormat::Pointer;
  ev.args.push_back(a);
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

namespace atrace::formats {

namespace {
uint64_t be64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v = v << 8 | p[i];
  return v;
}
void put_be64(uint8_t* p, uint64_t v) {
  for (int i = 7; i >= 0; i--, v >>= 8) p[i] = static_cast<uint8_t>(v);
}
ProbeArg number(uint64_t v) {
  ProbeArg a;
  a.value = v;
  return a;
}
}  // namespace

// The fields ride in the event's argument list (integers), like a module's
// build id, so that every other event stays as small as it was:
//   flags  kMessageRecv | kMessageNoOffset | protocol << 4
//   arg0   bytes, arg1 seq
//   args   TCP/UDP: local address (2 big-endian halves), peer address
//          (2), family << 32 | lport << 16 | pport; UNIX/PIPE: obj, peer_obj
NetMessage net_message(const Event& ev) {
  NetMessage m;
  if (ev.kind != EventKind::Message) return m;
  m.recv = ev.flags & kMessageRecv;
  m.offset_known = !(ev.flags & kMessageNoOffset);
  m.proto = static_cast<NetProto>(ev.flags >> 4);
  m.bytes = ev.arg0;
  m.seq = ev.arg1;
  const auto& a = ev.args;
  if (m.inet() && a.size() >= 5) {
    put_be64(m.laddr, a[0].value);
    put_be64(m.laddr + 8, a[1].value);
    put_be64(m.paddr, a[2].value);
    put_be64(m.paddr + 8, a[3].value);
    m.family = static_cast<uint8_t>(a[4].value >> 32);
    m.lport = static_cast<uint16_t>(a[4].value >> 16);
    m.pport = static_cast<uint16_t>(a[4].value);
    if (a.size() >= 6) m.call_ns = a[5].value;
  } else if (!m.inet() && a.size() >= 2) {
    m.obj = a[0].value;
    m.peer_obj = a[1].value;
    if (a.size() >= 3) m.call_ns = a[2].value;
  }
  return m;
}

void set_net_message(Event& ev, const NetMessage& m) {
  ev.kind = EventKind::Message;
  ev.flags =
      static_cast<uint8_t>((m.recv ? kMessageRecv : 0) | (m.offset_known ? 0 : kMessageNoOffset) |
                           static_cast<uint8_t>(m.proto) << 4);
  ev.arg0 = m.bytes;
  ev.arg1 = m.seq;
  ev.args.clear();
  if (m.inet()) {
    for (const uint8_t* p : {m.laddr, m.laddr + 8, m.paddr, m.paddr + 8})
      ev.args.push_back(number(be64(p)));
    ev.args.push_back(number(uint64_t{m.family} << 32 | uint64_t{m.lport} << 16 | m.pport));
  } else {
    ev.args.push_back(number(m.obj));
    ev.args.push_back(number(m.peer_obj));
  }
  ev.args.push_back(number(m.call_ns));
}

const char* to_string(NetProto p) {
  switch (p) {
    case NetProto::Tcp: return "tcp";
    case NetProto::Udp: return "udp";
    case NetProto::UnixStream: return "unix";
    case NetProto::UnixDgram: return "unix-dgram";
    case NetProto::Pipe: return "pipe";
  }
  return "unknown";
}

std::string net_end(const NetMessage& m, bool peer) {
  if (!m.inet()) {
    if (m.proto == NetProto::Pipe) return "pipe:" + std::to_string(m.obj);
    return "unix:" + std::to_string(peer ? m.peer_obj : m.obj);
  }
  const uint8_t* a = peer ? m.paddr : m.laddr;
  const unsigned port = peer ? m.pport : m.lport;
  char buf[64];
  if (m.family == 4) {
    std::snprintf(buf, sizeof(buf), "%u.%u.%u.%u:%u", a[0], a[1], a[2], a[3], port);
    return buf;
  }
  // RFC 5952: the longest run of two or more zero groups becomes "::".
  unsigned g[8];
  for (int i = 0; i < 8; i++) g[i] = unsigned{a[2 * i]} << 8 | a[2 * i + 1];
  int best = -1, best_len = 1;
  for (int i = 0; i < 8;) {
    int j = i;
    while (j < 8 && g[j] == 0) j++;
    if (j - i > best_len) best = i, best_len = j - i;
    i = j == i ? i + 1 : j;
  }
  std::string s = "[";
  for (int i = 0; i < 8; i++) {
    if (i == best) {
      s += "::";
      i += best_len - 1;
      continue;
    }
    if (s.size() > 1 && s.back() != ':') s += ':';
    std::snprintf(buf, sizeof(buf), "%x", g[i]);
    s += buf;
  }
  return s + "]:" + std::to_string(port);
}

}  // namespace atrace::formats
