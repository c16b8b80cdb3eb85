// `atrace convert --to=chrome`: Chrome Trace Event JSON (docs/export-chrome.md),
// read by ui.perfetto.dev and chrome://tracing.
//
// A function call becomes an "X" (complete) event, written at its end: the
// format does not require time order in the array, so nothing waits in
// memory for later events. A call still open when its thread exited or the
// recording ended is one too, ending there, with the category
// "function,unfinished". System calls and off-CPU periods are X events on
// the same thread (they nest inside the calls: export_timeline.h). Slices
// carry no args unless asked (--slice-args): speedscope names a frame by
// its name and args, so a system call's return value would split its
// frames. The other events are instants ("i") with their fields as args
// (speedscope ignores instants), DETACH decisions global ones. A message
// matched with its other end (record --kernel=+net) is an arrow too: a
// flow from the send's slice to the receive's ("s"/"f"). Times are CLOCK_MONOTONIC
// microseconds with three decimals, exact to the nanosecond.
#include <ostream>
#include <set>
#include <unordered_map>

#include "analysis/analysis.h"
#include "formats/trace_reader.h"
#include "output/arg_text.h"
#include "output/export.h"
#include "output/text_escape.h"

namespace atrace::analysis {

namespace {

class ChromeWriter : public TimelineSink {
 public:
  ChromeWriter(ChunkedWriter& w, TraceNames& names, bool slice_args)
      : w_(w), names_(names), slice_args_(slice_args) {}

  // Starts each event of the traceEvents array.
  std::string& next_event() {
    std::string& b = w_.buf();
    b += first_ ? "\n" : ",\n";
    first_ = false;
    return b;
  }

  void begin(uint32_t, uint32_t, const Span&) override {}  // written whole at the end

  void end(uint32_t pid, uint32_t tid, const Span& s, const SpanClose& c) override {
    std::string& b = next_event();
    b += "{\"ph\":\"X\"";
    common(b, pid, tid, s, c);
    b += ",\"dur\":";
    append_us(b, c.ts - s.start);
    if (slice_args_) args(b, s, c);
    b += "}";
    w_.maybe_flush();
  }

  void instant(const formats::Event& ev, const Instant& in) {
    std::string& b = next_event();
    b += "{\"ph\":\"i\",\"s\":";
    b += in.global ? "\"g\"" : "\"t\"";
    b += ",\"name\":";
    append_json_string(b, in.name);
    b += ",\"cat\":\"";
    b += in.category;
    b += "\",\"ts\":";
    append_us(b, ev.ts);
    ids(b, shown_id(ev.host, ev.pid), shown_id(ev.host, ev.tid));
    b += ",\"args\":{";
    append_args(b, in.args);
    b += "}}";
    w_.maybe_flush();
  }

  // "key":value,... of `args`, without the braces.
  static void append_args(std::string& b, const std::vector<InstantArg>& args) {
    for (size_t i = 0; i < args.size(); ++i) {
      const InstantArg& a = args[i];
      if (i) b += ',';
      append_json_string(b, a.key);
      b += ':';
      switch (a.type) {
        case InstantArg::Type::Int: append_int(b, static_cast<int64_t>(a.value)); break;
        case InstantArg::Type::Uint: append_uint(b, a.value); break;
        case InstantArg::Type::Hex: {
          std::string hex;
          append_hex(hex, a.value);
          append_json_string(b, hex);
          break;
        }
        case InstantArg::Type::Text: append_json_string(b, a.text); break;
      }
    }
  }

  // The arrows of a message (message_flows.h): "s" at a send, "f" at its
  // receive, each bound to the slice that encloses it on its thread
  // (bp "e"; the call the message was sent or received in).
  void flows(const formats::Event& ev, const MessageFlows::Arrows& a) {
    for (uint64_t id : a.starts) flow(ev, 's', id);
    if (a.ends) flow(ev, 'f', a.ends);
  }
  void flow(const formats::Event& ev, char ph, uint64_t id) {
    std::string& b = next_event();
    b += "{\"ph\":\"";
    b += ph;
    b += "\",\"bp\":\"e\",\"id\":";
    append_uint(b, id);
    b += ",\"name\":\"message\",\"cat\":\"message\",\"ts\":";
    append_us(b, ev.ts);
    ids(b, shown_id(ev.host, ev.pid), shown_id(ev.host, ev.tid));
    b += '}';
    w_.maybe_flush();
  }

  void metadata(const char* what, uint32_t pid, uint32_t tid, const std::string& name,
                const char* arg = "name") {
    std::string& b = next_event();
    b += "{\"ph\":\"M\",\"name\":\"";
    b += what;
    b += '"';
    ids(b, pid, tid);
    b += ",\"args\":{\"";
    b += arg;
    b += "\":";
    append_json_string(b, name);
    b += "}}";
  }
  void sort_index(uint32_t pid, uint32_t index) {
    std::string& b = next_event();
    b += "{\"ph\":\"M\",\"name\":\"process_sort_index\"";
    ids(b, pid, pid);
    b += ",\"args\":{\"sort_index\":";
    append_uint(b, index);
    b += "}}";
  }

 private:
  static void ids(std::string& b, uint32_t pid, uint32_t tid) {
    b += ",\"pid\":";
    append_uint(b, pid);
    b += ",\"tid\":";
    append_uint(b, tid);
  }

  // name, cat, ts, pid, tid. How a slice ended is a second category
  // ("function,unfinished"): viewers show categories, and speedscope, which
  // names frames by name and args, ignores them.
  void common(std::string& b, uint32_t pid, uint32_t tid, const Span& s, const SpanClose& c) {
    b += ",\"name\":";
    b += quoted_name(s);
    b += ",\"cat\":\"";
    b += s.kind == SpanKind::Function  ? "function"
         : s.kind == SpanKind::Syscall ? "syscall"
                                       : "sched";
    switch (c.how) {
      case SpanEnd::Closed: break;
      case SpanEnd::Unwound: b += ",unwound"; break;
      case SpanEnd::Repaired: b += ",repaired"; break;
      case SpanEnd::ThreadExit:
      case SpanEnd::TraceEnd: b += ",unfinished"; break;
      case SpanEnd::Abandoned: b += ",abandoned"; break;
      case SpanEnd::Untimed: b += ",untimed"; break;
    }
    b += "\",\"ts\":";
    append_us(b, s.start);
    ids(b, pid, tid);
  }

  void args(std::string& b, const Span& s, const SpanClose& c) {
    b += ",\"args\":{";
    switch (s.kind) {
      case SpanKind::Function:
        b += "\"module\":";
        b += quoted_module(s.id);
        // record --args/--retval: "arg1":..., "retval":...
        if ((s.args && !s.args->empty()) || (c.values && !c.values->empty())) {
          values_.clear();
          if (s.args) append_value_args(values_, *s.args);
          if (c.values) append_value_args(values_, *c.values);
          b += ',';
          append_args(b, values_);
        }
        break;
      case SpanKind::Syscall:
        b += "\"nr\":";
        append_uint(b, s.nr);
        if (c.has_ret) {
          b += ",\"ret\":";
          append_int(b, c.ret);
        }
        break;
      case SpanKind::OffCpu:
        b += "\"prev_state\":";
        append_uint(b, s.state);
        break;
    }
    switch (c.how) {
      case SpanEnd::Closed: break;
      case SpanEnd::Unwound: b += ",\"ended\":\"unwound by a caller's exit\""; break;
      case SpanEnd::Repaired: b += ",\"ended\":\"closing event lost\""; break;
      case SpanEnd::ThreadExit: b += ",\"unfinished\":true,\"ended\":\"thread exit\""; break;
      case SpanEnd::TraceEnd: b += ",\"unfinished\":true,\"ended\":\"end of recording\""; break;
      case SpanEnd::Abandoned: b += ",\"abandoned\":true,\"ended\":\"left by longjmp\""; break;
      case SpanEnd::Untimed:
        b += ",\"untimed\":true,\"ended\":\"not timed: its return cannot be seen (past the "
             "kernel's 64 nested return probes, its thread switched stacks, or its return "
             "address was given back to a stack walk; the slice "
             "ends where that was seen)\"";
        break;
    }
    b += '}';
  }

  // JSON-quoted names, built once per function or system call.
  const std::string& quoted_name(const Span& s) {
    uint64_t key = s.kind == SpanKind::Function  ? s.id
                   : s.kind == SpanKind::Syscall ? (uint64_t{1} << 40) + s.nr
                                                 : (uint64_t{2} << 40) + (s.blocked() ? 1 : 0);
    auto [it, fresh] = names_cache_.try_emplace(key);
    if (fresh) append_json_string(it->second, names_.span(s));
    return it->second;
  }
  const std::string& quoted_module(uint32_t id) {
    auto [it, fresh] = modules_cache_.try_emplace(id);
    if (fresh) append_json_string(it->second, names_.module(id));
    return it->second;
  }

  ChunkedWriter& w_;
  TraceNames& names_;
  bool slice_args_;  // --slice-args
  bool first_ = true;
  std::unordered_map<uint64_t, std::string> names_cache_;
  std::unordered_map<uint32_t, std::string> modules_cache_;
  std::vector<InstantArg> values_;  // a call's recorded values, reused
};

void other_data(std::string& b, const formats::TraceReader& reader) {
  const formats::TraceHeader& h = reader.header();
  auto field = [&](const char* key, const std::string& value) {
    b += ",\"";
    b += key;
    b += "\":";
    append_json_string(b, value);
  };
  b += "{\"otherData\":{\"clock\":\"CLOCK_MONOTONIC\"";
  field("atrace_version", h.atrace_version);
  field("command", h.target_command);
  field("host", h.host);
  field("kernel", h.kernel);
  field("kernel_events", h.kernel_events);
  b += ",\"start_ns\":";
  append_uint(b, h.start_mono_ns);
  b += ",\"end_ns\":";
  append_uint(b, h.end_mono_ns);
  b += ",\"lost_events\":";
  append_uint(b, reader.lost().total());
  b += "},\n\"traceEvents\":[";
}

}  // namespace

void export_chrome(formats::TraceReader& reader, std::ostream& out, const ExportOptions& options) {
  MessageFlows flows(reader);
  ChunkedWriter w(out);
  TraceNames names(reader.header(), reader.probes(), reader.threads(), options.long_names);
  names.set_processes(reader.processes());
  names.set_hosts(reader.hosts());
  other_data(w.buf(), reader);
  ChromeWriter chrome(w, names, options.slice_args);

  // Names first: viewers label tracks with them.
  std::set<uint32_t> pids;
  for (const auto& t : reader.threads()) {
    if (t.pid) pids.insert(shown_id(t.host, t.pid));
    chrome.metadata("thread_name", shown_id(t.host, t.pid), shown_id(t.host, t.tid), t.name);
  }
  for (uint32_t pid : pids) {
    chrome.metadata("process_name", pid, pid, names.process(pid));
    // A merged trace: each process labelled with its host, and the hosts'
    // processes kept together.
    if (names.several_hosts()) {
      chrome.metadata("process_labels", pid, pid, names.host(host_of_shown(pid)), "labels");
      chrome.sort_index(pid, host_of_shown(pid));
    }
  }

  Timeline timeline(chrome);
  Instant instant;
  formats::Event ev;
  while (reader.next(ev)) {
    if (!timeline.add(ev)) {
      describe_instant(ev, names, instant);
      chrome.instant(ev, instant);
      if (ev.kind == formats::EventKind::Message) chrome.flows(ev, flows.next());
    }
    // A process seen only in events (a forked child): named after the traced one's rules.
    if (const uint32_t pid = shown_id(ev.host, ev.pid); ev.tid && pids.insert(pid).second) {
      chrome.metadata("process_name", pid, pid, names.process(pid));
      if (names.several_hosts()) {
        chrome.metadata("process_labels", pid, pid, names.host(ev.host), "labels");
        chrome.sort_index(pid, ev.host);
      }
    }
    if (!w.ok()) return;
  }
  timeline.finish(reader.header().end_mono_ns);
  w.buf() += "\n]}\n";
  w.flush();
}

}  // namespace atrace::analysis
