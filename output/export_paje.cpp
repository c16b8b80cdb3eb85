// `atrace convert --to=paje`: a Paje trace (docs/export-paje.md) for ViTE and
// pajeng (pj_dump).
//
// The header defines the event records used (%EventDef, the numbering of
// pajeng's examples), then the type hierarchy:
//
//   0 (root)
//   └── (H  Host      container, one per recording of a merged trace)
//       P  Process   container, one per traced process
//       ├── PE        event type: DETACH decisions of the recording
//       └── T  Thread container, one per thread
//           ├── S  "Function"  state type: the call stack (push at entry,
//           │                  pop at exit; nesting = call depth)
//           ├── K  "Kernel"    state type: system calls, and off-CPU periods
//           │                  inside them or on their own
//           └── E  "Event"     event type: faults, fork, exec, ...
//   M  "Message"  link type from a thread to a thread (in the root): each
//                 message matched with its other end (message_flows.h),
//                 defined only where there are some
//
// Functions are entity values defined once each (alias f<probe id>), so a
// push names its function in a few bytes. Times are seconds since the start
// of the recording, with nanosecond precision; records come in time order,
// as Paje readers require, because the trace reader gives them so and spans
// end at the event that closes them.
#include <algorithm>
#include <cstdio>
#include <ostream>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "analysis/analysis.h"
#include "formats/trace_reader.h"
#include "output/export.h"
#include "output/text_escape.h"

namespace atrace::analysis {

namespace {

// Record numbers of the %EventDef blocks below.
enum Record {
  kDefineContainerType = 0,
  kDefineStateType = 1,
  kDefineEventType = 2,
  kDefineEntityValue = 3,
  kCreateContainer = 4,
  kDestroyContainer = 5,
  kPushState = 6,
  kPopState = 7,
  kNewEvent = 8,
  kDefineLinkType = 9,
  kStartLink = 10,
  kEndLink = 11,
};

constexpr const char* kHeader =
    "%EventDef PajeDefineContainerType 0\n"
    "%       Alias string\n"
    "%       Type string\n"
    "%       Name string\n"
    "%EndEventDef\n"
    "%EventDef PajeDefineStateType 1\n"
    "%       Alias string\n"
    "%       Type string\n"
    "%       Name string\n"
    "%EndEventDef\n"
    "%EventDef PajeDefineEventType 2\n"
    "%       Alias string\n"
    "%       Type string\n"
    "%       Name string\n"
    "%EndEventDef\n"
    "%EventDef PajeDefineEntityValue 3\n"
    "%       Alias string\n"
    "%       Type string\n"
    "%       Name string\n"
    "%       Color color\n"
    "%EndEventDef\n"
    "%EventDef PajeCreateContainer 4\n"
    "%       Time date\n"
    "%       Alias string\n"
    "%       Type string\n"
    "%       Container string\n"
    "%       Name string\n"
    "%EndEventDef\n"
    "%EventDef PajeDestroyContainer 5\n"
    "%       Time date\n"
    "%       Type string\n"
    "%       Name string\n"
    "%EndEventDef\n"
    "%EventDef PajePushState 6\n"
    "%       Time date\n"
    "%       Container string\n"
    "%       Type string\n"
    "%       Value string\n"
    "%EndEventDef\n"
    "%EventDef PajePopState 7\n"
    "%       Time date\n"
    "%       Container string\n"
    "%       Type string\n"
    "%EndEventDef\n"
    "%EventDef PajeNewEvent 8\n"
    "%       Time date\n"
    "%       Container string\n"
    "%       Type string\n"
    "%       Value string\n"
    "%EndEventDef\n";

// Only in a trace with matched messages: the output of the others stays
// as it was.
constexpr const char* kLinkEventDefs =
    "%EventDef PajeDefineLinkType 9\n"
    "%       Alias string\n"
    "%       Type string\n"
    "%       StartContainerType string\n"
    "%       EndContainerType string\n"
    "%       Name string\n"
    "%EndEventDef\n"
    "%EventDef PajeStartLink 10\n"
    "%       Time date\n"
    "%       Container string\n"
    "%       Type string\n"
    "%       StartContainer string\n"
    "%       Value string\n"
    "%       Key string\n"
    "%EndEventDef\n"
    "%EventDef PajeEndLink 11\n"
    "%       Time date\n"
    "%       Container string\n"
    "%       Type string\n"
    "%       EndContainer string\n"
    "%       Value string\n"
    "%       Key string\n"
    "%EndEventDef\n";

// A merged trace's hosts: each a container holding its processes.
constexpr const char* kHostTypes =
    "0 H 0 \"Host\"\n"
    "0 P H \"Process\"\n";
constexpr const char* kProcessType = "0 P 0 \"Process\"\n";
constexpr const char* kTypes =
    "0 T P \"Thread\"\n"
    "1 S T \"Function\"\n"
    "1 K T \"Kernel\"\n"
    "2 E T \"Event\"\n"
    "2 PE P \"Recording\"\n"
    "3 ob K \"off-cpu (blocked)\" \"0.6 0.6 0.6\"\n"
    "3 or K \"off-cpu (runnable)\" \"0.9 0.6 0.2\"\n";

// M: a message from one thread to another, in the root container (the
// two threads' common ancestor, whatever their processes).
constexpr const char* kLinkTypes =
    "9 M 0 T T \"Message\"\n"
    "3 m M \"message\" \"0.2 0.4 0.9\"\n";

// A colour per function, spread over the hue circle by its id (golden
// ratio steps), so neighbours in the probe table look different.
std::string color_of(uint32_t id) {
  double h = static_cast<double>(id) * 0.618033988749895;
  h -= static_cast<double>(static_cast<uint64_t>(h));
  double r = 0.5 + 0.4 * (h < 1.0 / 3 ? 1 - 3 * h : h < 2.0 / 3 ? 0 : 3 * h - 2);
  double g = 0.5 + 0.4 * (h < 1.0 / 3 ? 3 * h : h < 2.0 / 3 ? 2 - 3 * h : 0);
  double b = 0.5 + 0.4 * (h < 1.0 / 3 ? 0 : h < 2.0 / 3 ? 3 * h - 1 : 3 - 3 * h);
  char buf[48];
  std::snprintf(buf, sizeof buf, "\"%.2f %.2f %.2f\"", r, g, b);
  return buf;
}

class PajeWriter : public TimelineSink {
 public:
  PajeWriter(ChunkedWriter& w, TraceNames& names) : w_(w), names_(names) {}

  // The time origin: the recording's start, or the first event if earlier.
  bool has_origin() const { return origin_set_; }
  void origin_from(uint64_t header_start, uint64_t first_ts) {
    origin_ = header_start && header_start <= first_ts ? header_start : first_ts;
    origin_set_ = true;
  }

  void begin(uint32_t pid, uint32_t tid, const Span& s) override {
    thread(pid, tid, s.start);
    define_value(s);
    std::string& b = w_.buf();
    record(b, kPushState, s.start);
    b += " t";
    append_uint(b, tid);
    b += s.kind == SpanKind::Function ? " S " : " K ";
    value(b, s);
    b += '\n';
    w_.maybe_flush();
  }

  void end(uint32_t pid, uint32_t tid, const Span& s, const SpanClose& c) override {
    thread(pid, tid, c.ts);
    std::string& b = w_.buf();
    record(b, kPopState, c.ts);
    b += " t";
    append_uint(b, tid);
    b += s.kind == SpanKind::Function ? " S\n" : " K\n";
    w_.maybe_flush();
  }

  void instant(const formats::Event& ev, const Instant& in) {
    std::string& b = w_.buf();
    if (in.global) {
      process(shown_id(ev.host, ev.pid), ev.ts);
      record(b, kNewEvent, ev.ts);
      b += " p";
      append_uint(b, shown_id(ev.host, ev.pid));
      b += " PE ";
    } else {
      thread(shown_id(ev.host, ev.pid), shown_id(ev.host, ev.tid), ev.ts);
      record(b, kNewEvent, ev.ts);
      b += " t";
      append_uint(b, shown_id(ev.host, ev.tid));
      b += " E ";
    }
    append_paje_string(b, in.name);
    b += '\n';
    w_.maybe_flush();
  }

  // A message's links (message_flows.h): one starts at a send for each
  // receive of its bytes, one ends at each matched receive; the key pairs
  // them.
  void links(const formats::Event& ev, const MessageFlows::Arrows& a) {
    std::string& b = w_.buf();
    for (uint64_t id : a.starts) link(b, kStartLink, ev, id);
    if (a.ends) link(b, kEndLink, ev, a.ends);
    w_.maybe_flush();
  }

  void define_function(uint32_t id, const std::string& name) {
    std::string& b = w_.buf();
    record_head(b, kDefineEntityValue);
    b += " f";
    append_uint(b, id);
    b += " S ";
    append_paje_string(b, name);
    b += ' ';
    b += color_of(id);
    b += '\n';
    functions_.insert(id);
  }

  // Containers end with the recording, threads before their process.
  void destroy_all(uint64_t end) {
    std::string& b = w_.buf();
    for (uint32_t tid : std::set<uint32_t>(threads_.begin(), threads_.end())) {
      record(b, kDestroyContainer, end);
      b += " T t";
      append_uint(b, tid);
      b += '\n';
    }
    for (uint32_t pid : std::set<uint32_t>(processes_.begin(), processes_.end())) {
      record(b, kDestroyContainer, end);
      b += " P p";
      append_uint(b, pid);
      b += '\n';
    }
    for (uint16_t host : std::set<uint16_t>(hosts_.begin(), hosts_.end())) {
      record(b, kDestroyContainer, end);
      b += " H h";
      append_uint(b, host);
      b += '\n';
    }
  }

 private:
  static void record_head(std::string& b, Record r) { append_uint(b, r); }
  void link(std::string& b, Record r, const formats::Event& ev, uint64_t key) {
    const uint32_t tid = shown_id(ev.host, ev.tid);
    thread(shown_id(ev.host, ev.pid), tid, ev.ts);
    record(b, r, ev.ts);
    b += " 0 M t";
    append_uint(b, tid);
    b += " m ";
    append_uint(b, key);
    b += '\n';
  }
  void record(std::string& b, Record r, uint64_t ts) {
    append_uint(b, r);
    b += ' ';
    append_seconds(b, ts > origin_ ? ts - origin_ : 0);
  }

  // A merged trace's host container, before its first process.
  std::string host(uint32_t pid, uint64_t ts) {
    const uint16_t h = host_of_shown(pid);
    if (hosts_.insert(h).second) {
      std::string& b = w_.buf();
      record(b, kCreateContainer, ts);
      b += " h";
      append_uint(b, h);
      b += " H 0 ";
      append_paje_string(b, names_.host(h));
      b += '\n';
    }
    return "h" + std::to_string(h);
  }

  void process(uint32_t pid, uint64_t ts) {
    if (!processes_.insert(pid).second) return;
    const std::string parent = names_.several_hosts() ? host(pid, ts) : "0";
    std::string& b = w_.buf();
    record(b, kCreateContainer, ts);
    b += " p";
    append_uint(b, pid);
    b += " P ";
    b += parent;
    b += ' ';
    append_paje_string(b, "pid " + std::to_string(real_id(pid)) + " " + names_.process(pid));
    b += '\n';
  }

  void thread(uint32_t pid, uint32_t tid, uint64_t ts) {
    if (tid == last_tid_ && last_tid_) return;
    if (threads_.insert(tid).second) {
      process(pid, ts);
      std::string& b = w_.buf();
      record(b, kCreateContainer, ts);
      b += " t";
      append_uint(b, tid);
      b += " T p";
      append_uint(b, pid);
      b += ' ';
      const std::string& name = names_.thread(tid);
      append_paje_string(b,
                         "tid " + std::to_string(real_id(tid)) + (name.empty() ? "" : " " + name));
      b += '\n';
    }
    last_tid_ = tid;
  }

  // Entity values are defined before their first push.
  void define_value(const Span& s) {
    if (s.kind == SpanKind::Function && !functions_.count(s.id)) {
      define_function(s.id, names_.function(s.id));
    } else if (s.kind == SpanKind::Syscall && syscalls_.insert(s.nr).second) {
      std::string& b = w_.buf();
      record_head(b, kDefineEntityValue);
      b += " s";
      append_uint(b, s.nr);
      b += " K ";
      append_paje_string(b, names_.span(s));
      b += " \"0.8 0.3 0.3\"\n";
    }
  }

  static void value(std::string& b, const Span& s) {
    switch (s.kind) {
      case SpanKind::Function:
        b += 'f';
        append_uint(b, s.id);
        return;
      case SpanKind::OffCpu: b += s.blocked() ? "ob" : "or"; return;
      case SpanKind::Syscall:
        b += 's';
        append_uint(b, s.nr);
        return;
    }
  }

  ChunkedWriter& w_;
  TraceNames& names_;
  uint64_t origin_ = 0;
  bool origin_set_ = false;
  std::unordered_set<uint32_t> processes_, threads_, functions_;
  std::unordered_set<uint16_t> hosts_;
  std::unordered_set<uint64_t> syscalls_;
  uint32_t last_tid_ = 0;
};

}  // namespace

void export_paje(formats::TraceReader& reader, std::ostream& out, const ExportOptions& options) {
  MessageFlows flows(reader);
  ChunkedWriter w(out);
  TraceNames names(reader.header(), reader.probes(), reader.threads(), options.long_names);
  names.set_processes(reader.processes());
  names.set_hosts(reader.hosts());
  w.buf() += kHeader;
  if (!flows.empty()) w.buf() += kLinkEventDefs;
  w.buf() += names.several_hosts() ? kHostTypes : kProcessType;
  w.buf() += kTypes;
  if (!flows.empty()) w.buf() += kLinkTypes;
  PajeWriter paje(w, names);
  for (const auto& p : reader.probes()) paje.define_function(p.id, names.function(p.id));

  Timeline timeline(paje);
  Instant instant;
  formats::Event ev;
  uint64_t last_ts = 0;
  while (reader.next(ev)) {
    if (!paje.has_origin()) paje.origin_from(reader.header().start_mono_ns, ev.ts);
    last_ts = std::max(last_ts, ev.ts);
    if (!timeline.add(ev)) {
      describe_instant(ev, names, instant);
      paje.instant(ev, instant);
      if (ev.kind == formats::EventKind::Message) paje.links(ev, flows.next());
    }
    if (!w.ok()) return;
  }
  timeline.finish(reader.header().end_mono_ns);
  paje.destroy_all(std::max(last_ts, reader.header().end_mono_ns));
  w.flush();
}

}  // namespace atrace::analysis
