// `atrace convert --to=perfetto`: a Perfetto protobuf trace
// (docs/export-perfetto.md) for ui.perfetto.dev and trace_processor.
//
// The file is a `Trace`: a sequence of TracePacket messages, each written
// as field 1 of Trace, in event order (one pass, per-thread state only).
// One packet sequence (trusted_packet_sequence_id 1) carries everything:
//   - a TrackDescriptor per process and per thread (the thread's track is a
//     child of its process's), written before the first event on it;
//   - a TrackEvent per span boundary: SLICE_BEGIN at a call's entry (or a
//     system call's, an off-CPU period's start), SLICE_END at its end, on
//     the thread's track; INSTANT for the other events (on the process
//     track for DETACH decisions); a message's INSTANT starts (a send) or
//     ends (its receive) the flow of each matched message (flow_ids,
//     terminating_flow_ids: message_flows.h), drawn as an arrow;
//   - names, categories and argument names interned: a string is written
//     once, in the InternedData of the first packet that uses it, and
//     referred to by its iid afterwards. That is what keeps a trace of
//     millions of calls small where JSON repeats every name.
//
// Field numbers, from Perfetto's protos (github.com/google/perfetto,
// protos/perfetto/trace/...):
//   trace.proto                Trace.packet = 1
//   trace_packet.proto         TracePacket.timestamp = 8,
//                              trusted_packet_sequence_id = 10,
//                              track_event = 11, interned_data = 12,
//                              sequence_flags = 13, track_descriptor = 60;
//                              SEQ_INCREMENTAL_STATE_CLEARED = 1,
//                              SEQ_NEEDS_INCREMENTAL_STATE = 2
//   track_event/track_descriptor.proto
//                              TrackDescriptor.uuid = 1, name = 2,
//                              process = 3, thread = 4, parent_uuid = 5
//   track_event/process_descriptor.proto
//                              ProcessDescriptor.pid = 1, cmdline = 2,
//                              process_name = 6
//   track_event/thread_descriptor.proto
//                              ThreadDescriptor.pid = 1, tid = 2, thread_name = 5
//   track_event/track_event.proto
//                              TrackEvent.category_iids = 3,
//                              debug_annotations = 4, type = 9, name_iid = 10,
//                              track_uuid = 11, flow_ids = 47 (fixed64),
//                              terminating_flow_ids = 48 (fixed64);
//                              TYPE_SLICE_BEGIN = 1,
//                              TYPE_SLICE_END = 2, TYPE_INSTANT = 3;
//                              EventCategory / EventName: iid = 1, name = 2
//   track_event/debug_annotation.proto
//                              DebugAnnotation.name_iid = 1, bool_value = 2,
//                              uint_value = 3, int_value = 4, string_value = 6,
//                              pointer_value = 7; DebugAnnotationName: iid = 1,
//                              name = 2
//   interned_data/interned_data.proto
//                              InternedData.event_categories = 1,
//                              event_names = 2, debug_annotation_names = 3
//
// Timestamps are the trace's CLOCK_MONOTONIC nanoseconds, written without a
// clock id: Perfetto takes them as its default trace clock, which only
// changes the labels (times are shown from the trace's start).
#include <ostream>
#include <string>
#include <unordered_map>

#include "analysis/analysis.h"
#include "formats/trace_reader.h"
#include "output/arg_text.h"
#include "output/export.h"
#include "output/proto_wire.h"
#include "output/text_escape.h"

namespace atrace::analysis {

namespace {

namespace field {
constexpr uint32_t kTracePacket = 1;
// TracePacket
constexpr uint32_t kTimestamp = 8, kSequenceId = 10, kTrackEvent = 11, kInternedData = 12,
                   kSequenceFlags = 13, kTrackDescriptor = 60;
// TrackDescriptor
constexpr uint32_t kUuid = 1, kProcess = 3, kThread = 4, kParentUuid = 5;
// ProcessDescriptor
constexpr uint32_t kProcessPid = 1, kCmdline = 2, kProcessName = 6;
// ThreadDescriptor
constexpr uint32_t kThreadPid = 1, kThreadTid = 2, kThreadName = 5;
// TrackEvent
constexpr uint32_t kCategoryIids = 3, kDebugAnnotations = 4, kType = 9, kNameIid = 10,
                   kTrackUuid = 11, kFlowIds = 47, kTerminatingFlowIds = 48;
// InternedData
constexpr uint32_t kEventCategories = 1, kEventNames = 2, kAnnotationNames = 3;
// EventName, EventCategory, DebugAnnotationName
constexpr uint32_t kIid = 1, kName = 2;
// DebugAnnotation
constexpr uint32_t kAnnotationNameIid = 1, kBoolValue = 2, kUintValue = 3, kIntValue = 4,
                   kStringValue = 6, kPointerValue = 7;
}  // namespace field

constexpr uint32_t kSequenceId = 1;
constexpr uint64_t kIncrementalStateCleared = 1, kNeedsIncrementalState = 2;
constexpr uint64_t kSliceBegin = 1, kSliceEnd = 2, kInstant = 3;

// An interning index: string -> iid (from 1), with the entries new since the
// last packet queued for its InternedData.
class Interner {
 public:
  uint64_t iid(const std::string& s, proto::Message& interned, uint32_t list_field) {
    auto [it, fresh] = ids_.try_emplace(s, ids_.size() + 1);
    if (fresh) {
      entry_.clear();
      entry_.uint(field::kIid, it->second).bytes(field::kName, s);
      interned.message(list_field, entry_);
    }
    return it->second;
  }

 private:
  std::unordered_map<std::string, uint64_t> ids_;
  proto::Message entry_;
};

class PerfettoWriter : public TimelineSink {
 public:
  PerfettoWriter(ChunkedWriter& w, TraceNames& names, const formats::TraceHeader& header)
      : w_(w), names_(names), header_(header) {}

  // The first packet: the sequence starts with a clean incremental state.
  void start() {
    packet_.clear();
    packet_.uint(field::kSequenceId, kSequenceId)
        .uint(field::kSequenceFlags, kIncrementalStateCleared);
    emit();
  }

  void begin(uint32_t pid, uint32_t tid, const Span& s) override {
    start_event(s.start, thread_track(pid, tid), kSliceBegin);
    event_.uint(field::kNameIid, span_name(s));
    event_.uint(field::kCategoryIids, category(s.kind == SpanKind::Function  ? names_.module(s.id)
                                               : s.kind == SpanKind::Syscall ? "syscall"
                                                                             : "sched"));
    if (s.kind == SpanKind::Syscall) annotate_uint("nr", s.nr);
    if (s.args) annotate_values(*s.args);  // record --args
    finish_event();
  }

  void end(uint32_t pid, uint32_t tid, const Span&, const SpanClose& c) override {
    start_event(c.ts, thread_track(pid, tid), kSliceEnd);
    // Arguments of an END are merged into its slice's.
    if (c.has_ret) annotate_int("ret", c.ret);
    if (c.values) annotate_values(*c.values);  // record --retval
    if (unfinished(c.how)) annotate_bool("unfinished", true);
    if (c.how == SpanEnd::Unwound) annotate_bool("unwound", true);
    if (c.how == SpanEnd::Repaired) annotate_bool("closing_event_lost", true);
    if (c.how == SpanEnd::Abandoned) annotate_bool("abandoned", true);
    if (c.how == SpanEnd::Untimed) annotate_bool("untimed", true);
    finish_event();
  }

  // arrows: a message's (message_flows.h), nullptr for other events. A
  // send's instant starts its arrows, a receive's ends its one: the viewer
  // draws each from the send to the receive.
  void instant(const formats::Event& ev, const Instant& in,
               const MessageFlows::Arrows* arrows = nullptr) {
    const uint32_t pid = shown_id(ev.host, ev.pid);
    uint64_t track = in.global ? process_track(pid) : thread_track(pid, shown_id(ev.host, ev.tid));
    start_event(ev.ts, track, kInstant);
    event_.uint(field::kNameIid, names_iid_.iid(in.name, interned_, field::kEventNames));
    event_.uint(field::kCategoryIids, category(in.category));
    annotate_args(in.args);
    if (arrows) {
      for (uint64_t id : arrows->starts) event_.fixed64(field::kFlowIds, id);
      if (arrows->ends) event_.fixed64(field::kTerminatingFlowIds, arrows->ends);
    }
    finish_event();
  }

  // Every thread of the file's table gets its track up front, so that the
  // viewer lists them in the table's order.
  void declare(uint32_t pid, uint32_t tid) { thread_track(pid, tid); }

 private:
  void annotate_values(const std::vector<formats::ProbeArg>& values) {
    if (values.empty()) return;
    values_.clear();
    append_value_args(values_, values);
    annotate_args(values_);
  }

  void annotate_args(const std::vector<InstantArg>& args) {
    for (const InstantArg& a : args) {
      switch (a.type) {
        case InstantArg::Type::Int: annotate_int(a.key, static_cast<int64_t>(a.value)); break;
        case InstantArg::Type::Uint: annotate_uint(a.key, a.value); break;
        case InstantArg::Type::Hex:
          annotate(a.key).uint(field::kPointerValue, a.value);
          flush_annotation();
          break;
        case InstantArg::Type::Text: {
          std::string text;
          append_utf8(text, a.text);  // protobuf strings must be UTF-8
          annotate(a.key).bytes(field::kStringValue, text);
          flush_annotation();
          break;
        }
      }
    }
  }

  void emit() {
    std::string& b = w_.buf();
    proto::append_tag(b, field::kTracePacket, proto::kLen);
    proto::append_varint(b, packet_.data().size());
    b += packet_.data();
    w_.maybe_flush();
  }

  uint64_t process_track(uint32_t pid) {
    auto [it, fresh] = processes_.try_emplace(pid, 0);
    if (!fresh) return it->second;
    it->second = next_uuid_++;
    proto::Message process;
    process.uint(field::kProcessPid, pid);
    if (pid == header_.target_pid && !header_.target_command.empty()) {
      std::string cmd;
      append_utf8(cmd, header_.target_command);
      process.bytes(field::kCmdline, cmd);
    }
    std::string name;
    append_utf8(name, names_.process(pid));
    process.bytes(field::kProcessName, name);
    proto::Message track;
    track.uint(field::kUuid, it->second).message(field::kProcess, process);
    packet_.clear();
    packet_.uint(field::kSequenceId, kSequenceId).message(field::kTrackDescriptor, track);
    emit();
    return it->second;
  }

  uint64_t thread_track(uint32_t pid, uint32_t tid) {
    if (tid == last_tid_ && last_track_) return last_track_;
    auto found = threads_.find(tid);
    if (found == threads_.end()) {
      uint64_t parent = process_track(pid);
      uint64_t uuid = next_uuid_++;
      found = threads_.emplace(tid, uuid).first;
      proto::Message thread;
      thread.uint(field::kThreadPid, pid).uint(field::kThreadTid, tid);
      const std::string& table_name = names_.thread(tid);
      if (!table_name.empty()) {
        std::string name;
        append_utf8(name, table_name);
        thread.bytes(field::kThreadName, name);
      }
      proto::Message track;
      track.uint(field::kUuid, uuid)
          .uint(field::kParentUuid, parent)
          .message(field::kThread, thread);
      packet_.clear();
      packet_.uint(field::kSequenceId, kSequenceId).message(field::kTrackDescriptor, track);
      emit();
    }
    last_tid_ = tid;
    last_track_ = found->second;
    return last_track_;
  }

  void start_event(uint64_t ts, uint64_t track, uint64_t type) {
    ts_ = ts;
    event_.clear();
    interned_.clear();
    event_.uint(field::kType, type).uint(field::kTrackUuid, track);
  }

  void finish_event() {
    packet_.clear();
    packet_.uint(field::kTimestamp, ts_).uint(field::kSequenceId, kSequenceId);
    packet_.uint(field::kSequenceFlags, kNeedsIncrementalState);
    if (!interned_.empty()) packet_.message(field::kInternedData, interned_);
    packet_.message(field::kTrackEvent, event_);
    emit();
  }

  uint64_t span_name(const Span& s) {
    uint64_t key = s.kind == SpanKind::Function  ? s.id
                   : s.kind == SpanKind::Syscall ? (uint64_t{1} << 40) + s.nr
                                                 : (uint64_t{2} << 40) + (s.blocked() ? 1 : 0);
    auto it = span_iids_.find(key);
    if (it != span_iids_.end()) return it->second;
    std::string name;
    append_utf8(name, names_.span(s));
    uint64_t iid = names_iid_.iid(name, interned_, field::kEventNames);
    span_iids_.emplace(key, iid);
    return iid;
  }

  uint64_t category(const std::string& name) {
    std::string valid;
    append_utf8(valid, name.empty() ? "function" : name);
    return categories_.iid(valid, interned_, field::kEventCategories);
  }

  // A new debug annotation of the current event, named; the caller sets
  // its value.
  proto::Message& annotate(const std::string& key) {
    annotation_.clear();
    annotation_.uint(field::kAnnotationNameIid,
                     annotation_names_.iid(key, interned_, field::kAnnotationNames));
    pending_annotation_ = true;
    return annotation_;
  }
  void flush_annotation() {
    if (pending_annotation_) event_.message(field::kDebugAnnotations, annotation_);
    pending_annotation_ = false;
  }
  void annotate_uint(const std::string& key, uint64_t v) {
    annotate(key).uint(field::kUintValue, v);
    flush_annotation();
  }
  void annotate_int(const std::string& key, int64_t v) {
    annotate(key).sint64(field::kIntValue, v);
    flush_annotation();
  }
  void annotate_bool(const std::string& key, bool v) {
    annotate(key).uint(field::kBoolValue, v ? 1 : 0);
    flush_annotation();
  }

  ChunkedWriter& w_;
  TraceNames& names_;
  const formats::TraceHeader& header_;
  proto::Message packet_, event_, interned_, annotation_;
  bool pending_annotation_ = false;
  uint64_t ts_ = 0;
  Interner names_iid_, categories_, annotation_names_;
  std::unordered_map<uint64_t, uint64_t> span_iids_;
  std::unordered_map<uint32_t, uint64_t> processes_, threads_;
  uint64_t next_uuid_ = 1;
  uint32_t last_tid_ = 0;
  uint64_t last_track_ = 0;
  std::vector<InstantArg> values_;  // a call's recorded values, reused
};

}  // namespace

void export_perfetto(formats::TraceReader& reader, std::ostream& out,
                     const ExportOptions& options) {
  MessageFlows flows(reader);
  ChunkedWriter w(out);
  TraceNames names(reader.header(), reader.probes(), reader.threads(), options.long_names);
  names.set_processes(reader.processes());
  names.set_hosts(reader.hosts());
  PerfettoWriter perfetto(w, names, reader.header());
  perfetto.start();
  for (const auto& t : reader.threads())
    if (t.tid) perfetto.declare(shown_id(t.host, t.pid ? t.pid : t.tid), shown_id(t.host, t.tid));

  Timeline timeline(perfetto);
  Instant instant;
  formats::Event ev;
  while (reader.next(ev)) {
    if (!timeline.add(ev)) {
      describe_instant(ev, names, instant);
      perfetto.instant(ev, instant,
                       ev.kind == formats::EventKind::Message ? &flows.next() : nullptr);
    }
    if (!w.ok()) return;
  }
  timeline.finish(reader.header().end_mono_ns);
  w.flush();
}

}  // namespace atrace::analysis
