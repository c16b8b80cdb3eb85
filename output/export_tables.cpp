// The typed tables (export_tables.h, docs/tables.md): one listener on the
// call replay turns calls, kernel intervals, messages and DETACH events into
// rows (table_batch.h) as they happen; the small tables (processes, threads, functions,
// traces) are written from the reader's tables and the replay's threads at
// the end, and so are the matched message pairs. Memory: one batch per
// table, the replay's open calls and a call id per open call, and the
// message ends (what report's messages table holds too); never the events.
#include "output/export_tables.h"

#include <xxhash.h>

#include <map>
#include <memory>
#include <unordered_map>

#include "analysis/analysis.h"
#include "formats/trace_reader.h"
#include "output/arg_text.h"

namespace atrace::analysis {
namespace {

// Indexes into table_defs().
enum TableIndex : size_t {
  kProcesses,
  kThreads,
  kFunctions,
  kCalls,
  kKernel,
  kMessages,
  kMessagePairs,
  kDetaches,
  kTraces,
  kTableCount
};

const char* end_name(CallEnd e) {
  switch (e) {
    case CallEnd::Returned: return "returned";
    case CallEnd::Abandoned: return "abandoned";
    case CallEnd::Unwound: return "unwound";
    case CallEnd::ThreadExit: return "thread_exit";
    case CallEnd::TraceEnd: return "trace_end";
    case CallEnd::Gap: return "gap";
    case CallEnd::Exec: return "exec";
    case CallEnd::Untimed: return "untimed";
  }
  return "unknown";
}

const char* interval_end_name(IntervalEnd e) {
  switch (e) {
    case IntervalEnd::Closed: return "closed";
    case IntervalEnd::Repaired: return "repaired";
    case IntervalEnd::ThreadExit: return "thread_exit";
    case IntervalEnd::TraceEnd: return "trace_end";
  }
  return "unknown";
}

using Row = TableBatch::Row;

class TablesBuilder : public ReplayListener {
 public:
  TablesBuilder(uint64_t trace_id, TableSink& sink, size_t batch_rows, const RawClock& raw,
                std::vector<uint32_t> machines)
      : trace_(trace_id),
        sink_(sink),
        batch_rows_(batch_rows ? batch_rows : 1),
        raw_(raw),
        machines_(std::move(machines)) {
    counts_.rows.assign(kTableCount, 0);
    for (const auto& def : table_defs()) batches_.emplace_back(std::make_unique<TableBatch>(def));
  }

  void on_call_begin(const ReplayThread& t, const OpenCall&) override {
    ids_of(t).push_back(++last_call_);
  }

  void on_call_end(const ReplayThread& t, const ClosedCall& c) override {
    std::vector<uint64_t>& ids = ids_of(t);
    // The replay's stack and this one move together: the closed call was
    // at c.index, its caller is now just below it.
    uint64_t id = 0, parent = 0;
    if (c.index < ids.size()) {
      id = ids[c.index];
      ids.erase(ids.begin() + static_cast<std::ptrdiff_t>(c.index));
      if (c.index > 0) parent = ids[c.index - 1];
    }
    const bool is_timed = timed(c.how);
    const bool finished = is_timed && !unfinished(c.how);
    {
      Row r = row(kCalls);
      r.u(trace_).u(t.host).u(t.pid).u(t.tid).u(id).u(parent).u(c.id).u(c.index);
      r.u(c.start).u(c.end).u(c.dur).u(c.self_ns);
      r.u(c.outermost).u(is_timed).u(finished).s(end_name(c.how));
      r.u(c.kernel.offcpu_ns()).u(c.kernel.syscall_ns).u(c.kernel.syscalls).u(c.kernel.faults);
      r.u(c.self_kernel.offcpu_ns())
          .u(c.self_kernel.syscall_ns)
          .u(c.self_kernel.syscalls)
          .u(c.self_kernel.faults);
      r.s(c.args && !c.args->empty() ? values_text(*c.args) : std::string());
      r.s(c.ret && !c.ret->empty() ? values_text(*c.ret) : std::string());
      r.i(raw_delta(t.host, c.start));
    }
    flush_if_full(kCalls);
    host_calls_[t.host]++;
  }

  void on_interval_close(const ReplayThread& t, const KernelInterval& i,
                         const IntervalClose& c) override {
    const auto [call, fn] = innermost(t);
    {
      Row r = row(kKernel);
      r.u(trace_).u(t.host).u(t.pid).u(t.tid);
      if (i.kind == IntervalKind::OffCpu) {
        r.s("offcpu");
      } else {
        r.s("syscall");
      }
      r.u(i.start).u(c.ts > i.start ? c.ts - i.start : 0).u(call).u(fn);
      if (i.kind == IntervalKind::Syscall) {
        r.u(i.nr).s(syscall_name(i.nr)).i(c.has_ret ? c.ret : 0).u(c.has_ret);
        r.s("");
      } else {
        r.u(0).s("").i(0).u(0);
        r.s(i.state == formats::kSwitchRunnable ? "runnable" : "blocked");
      }
      r.s(interval_end_name(c.how)).u(0).u(0);
    }
    flush_if_full(kKernel);
  }

  void on_event(const formats::Event& ev, const ReplayThread* t) override {
    if (ev.kind == formats::EventKind::PageFault && t) {
      const auto [call, fn] = innermost(*t);
      {
        Row r = row(kKernel);
        r.u(trace_).u(t->host).u(t->pid).u(t->tid).s("fault").u(ev.ts).u(0).u(call).u(fn);
        r.u(0).s("").i(0).u(0).s("").s("closed").u(ev.arg0).u(ev.flags);
      }
      flush_if_full(kKernel);
    } else if (ev.kind == formats::EventKind::Message && t) {
      const auto [call, fn] = innermost(*t);
      const formats::NetMessage m = formats::net_message(ev);
      {
        Row r = row(kMessages);
        r.u(trace_).u(t->host).u(t->pid).u(t->tid).u(ev.ts).u(call).u(fn);
        r.s(m.recv ? "recv" : "send").s(formats::to_string(m.proto)).u(m.bytes).u(m.seq);
        r.s(formats::net_end(m, false)).s(formats::net_end(m, true));
        r.u(m.obj).u(m.peer_obj).u(m.call_ns).i(raw_delta(t->host, ev.ts));
      }
      flush_if_full(kMessages);
      ends_.push_back(message_end(ev, machines_));
      end_calls_.push_back({call, fn});
    } else if (ev.kind == formats::EventKind::Detach) {
      {
        Row r = row(kDetaches);
        r.u(trace_).u(ev.host).u(ev.ts).u(ev.id).s(
            formats::to_string(formats::detach_reason(ev.flags)));
        r.u(ev.arg0).u(ev.arg1);
      }
      flush_if_full(kDetaches);
    }
  }

  // The `message_pairs` rows, once every message is in: a receive's send
  // may be anywhere in the trace (analysis/message_match.h pairs them,
  // as report's messages table does). Memory: the ends, as report's.
  void write_pairs() {
    for (const MessageMatch& mm : match_messages(ends_)) {
      const MessageEnd &s = ends_[mm.send], &r = ends_[mm.recv];
      {
        Row row = this->row(kMessagePairs);
        row.u(trace_).s(formats::to_string(s.m.proto)).u(mm.bytes);
        row.i(static_cast<int64_t>(r.ts - s.ts));
        pair_end(row, s, end_calls_[mm.send]);
        pair_end(row, r, end_calls_[mm.recv]);
      }
      flush_if_full(kMessagePairs);
    }
    ends_ = {};
    end_calls_ = {};
  }

  Row row(size_t table) {
    counts_.rows[table]++;
    return batches_[table]->row();
  }

  void flush_if_full(size_t table) {
    if (batches_[table]->rows() >= batch_rows_) flush(table);
  }
  void flush(size_t table) {
    TableBatch& b = *batches_[table];
    if (b.rows() == 0) return;
    sink_.rows(b);
    b.clear();
  }

  uint64_t trace() const { return trace_; }
  const TableCounts& counts() const { return counts_; }
  uint64_t calls_of(uint16_t host) const {
    auto it = host_calls_.find(host);
    return it == host_calls_.end() ? 0 : it->second;
  }

 private:
  std::vector<uint64_t>& ids_of(const ReplayThread& t) {
    if (&t == last_thread_) return *last_ids_;
    last_thread_ = &t;
    last_ids_ = &open_ids_[formats::thread_key(t.host, t.tid)];
    return *last_ids_;
  }
  // The call an interval, fault or message of `t` falls in, and its function.
  std::pair<uint64_t, uint32_t> innermost(const ReplayThread& t) {
    if (t.stack.empty()) return {0, 0};
    const std::vector<uint64_t>& ids = ids_of(t);
    return {ids.empty() ? 0 : ids.back(), t.stack.back().id};
  }

  // One end of a pair: who, when, in which call, between which addresses.
  void pair_end(Row& row, const MessageEnd& e, std::pair<uint64_t, uint32_t> call) const {
    row.u(e.host).u(e.pid).u(e.tid).u(e.ts).u(call.first).u(call.second);
    row.s(formats::net_end(e.m, false)).s(formats::net_end(e.m, true));
    row.i(raw_delta(e.host, e.ts));
  }

  // Raw minus corrected: 0 in a single recording, so the column costs
  // next to nothing on a server (a copy of start_ns took 5 MB a million
  // calls).
  int64_t raw_delta(uint16_t host, uint64_t ts) const {
    return static_cast<int64_t>(raw_.raw(host, ts) - ts);
  }

  uint64_t trace_;
  TableSink& sink_;
  size_t batch_rows_;
  const RawClock& raw_;
  std::vector<std::unique_ptr<TableBatch>> batches_;  // by TableIndex
  TableCounts counts_;
  uint64_t last_call_ = 0;
  // Thread -> the ids of its open calls, in the replay's stack order.
  std::unordered_map<uint64_t, std::vector<uint64_t>> open_ids_;
  const ReplayThread* last_thread_ = nullptr;
  std::vector<uint64_t>* last_ids_ = nullptr;
  std::map<uint16_t, uint64_t> host_calls_;
  // Every message end, and the call and function it fell in, for
  // write_pairs().
  std::vector<uint32_t> machines_;
  std::vector<MessageEnd> ends_;
  std::vector<std::pair<uint64_t, uint32_t>> end_calls_;
};

// CLOCK_REALTIME at the recording's start: its host's first clock
// snapshot (a merged trace's header has the merged start only).
uint64_t start_realtime(const formats::HostClocks* clocks, const formats::TraceHeader& h) {
  if (clocks)
    for (const auto& s : clocks->snapshots)
      if (s.when == formats::ClockSnapshot::When::Start && s.real_ns) return s.real_ns;
  return h.start_real_ns;
}

void add_u64(XXH3_state_t* st, uint64_t v) { XXH3_64bits_update(st, &v, sizeof v); }
void add_str(XXH3_state_t* st, const std::string& s) {
  add_u64(st, s.size());
  XXH3_64bits_update(st, s.data(), s.size());
}

}  // namespace

// The columns: docs/tables.md says what each one holds.
const std::vector<TableDef>& table_defs() {
  static const std::vector<TableDef> defs = {
      {"processes",
       {{"trace_id", "UInt64"},
        {"host", "UInt16"},
        {"pid", "UInt32"},
        {"ns_pid", "UInt32"},
        {"pid_ns", "UInt64"},
        {"mnt_ns", "UInt64"},
        {"cgroup", "String"},
        {"container", "String"},
        {"root", "String"}},
       "trace_id, host, pid"},
      {"threads",
       {{"trace_id", "UInt64"},
        {"host", "UInt16"},
        {"tid", "UInt32"},
        {"pid", "UInt32"},
        {"name", "String"},
        {"first_ns", "UInt64"},
        {"last_ns", "UInt64"},
        {"events", "UInt64"},
        {"gaps", "UInt64"},
        {"lost_events", "UInt64"}},
       "trace_id, host, tid"},
      {"functions",
       {{"trace_id", "UInt64"},
        {"function_id", "UInt32"},
        {"kind", "String"},
        {"name", "String"},
        {"short_name", "String"},
        {"module", "String"},
        {"path", "String"},
        {"build_id", "String"},
        {"address", "UInt64"},
        {"probe_path", "String"}},
       "trace_id, function_id"},
      {"calls",
       {{"trace_id", "UInt64"},
        {"host", "UInt16"},
        {"pid", "UInt32"},
        {"tid", "UInt32"},
        {"call_id", "UInt64"},
        {"parent_id", "UInt64"},
        {"function_id", "UInt32"},
        {"depth", "UInt32"},
        {"start_ns", "UInt64"},
        {"end_ns", "UInt64"},
        {"duration_ns", "UInt64"},
        {"self_ns", "UInt64"},
        {"outermost", "UInt8"},
        {"timed", "UInt8"},
        {"finished", "UInt8"},
        {"ended", "String"},
        {"offcpu_ns", "UInt64"},
        {"syscall_ns", "UInt64"},
        {"syscalls", "UInt64"},
        {"faults", "UInt64"},
        {"self_offcpu_ns", "UInt64"},
        {"self_syscall_ns", "UInt64"},
        {"self_syscalls", "UInt64"},
        {"self_faults", "UInt64"},
        {"args", "String"},
        {"retval", "String"},
        {"raw_delta_ns", "Int64"}},
       "trace_id, function_id, start_ns"},
      {"kernel",
       {{"trace_id", "UInt64"},
        {"host", "UInt16"},
        {"pid", "UInt32"},
        {"tid", "UInt32"},
        {"kind", "String"},
        {"start_ns", "UInt64"},
        {"duration_ns", "UInt64"},
        {"call_id", "UInt64"},
        {"function_id", "UInt32"},
        {"nr", "UInt64"},
        {"syscall", "String"},
        {"ret", "Int64"},
        {"has_ret", "UInt8"},
        {"state", "String"},
        {"ended", "String"},
        {"address", "UInt64"},
        {"flags", "UInt8"}},
       "trace_id, kind, host, tid, start_ns"},
      {"messages",
       {{"trace_id", "UInt64"},
        {"host", "UInt16"},
        {"pid", "UInt32"},
        {"tid", "UInt32"},
        {"ts_ns", "UInt64"},
        {"call_id", "UInt64"},
        {"function_id", "UInt32"},
        {"direction", "String"},
        {"protocol", "String"},
        {"bytes", "UInt64"},
        {"seq", "UInt64"},
        {"local", "String"},
        {"peer", "String"},
        {"object", "UInt64"},
        {"peer_object", "UInt64"},
        {"call_ns", "UInt64"},
        {"raw_delta_ns", "Int64"}},
       "trace_id, host, ts_ns"},
      {"message_pairs",
       {{"trace_id", "UInt64"},         {"protocol", "String"},   {"bytes", "UInt64"},
        {"latency_ns", "Int64"},        {"send_host", "UInt16"},  {"send_pid", "UInt32"},
        {"send_tid", "UInt32"},         {"send_ns", "UInt64"},    {"send_call_id", "UInt64"},
        {"send_function_id", "UInt32"}, {"send_local", "String"}, {"send_peer", "String"},
        {"send_raw_delta_ns", "Int64"}, {"recv_host", "UInt16"},  {"recv_pid", "UInt32"},
        {"recv_tid", "UInt32"},         {"recv_ns", "UInt64"},    {"recv_call_id", "UInt64"},
        {"recv_function_id", "UInt32"}, {"recv_local", "String"}, {"recv_peer", "String"},
        {"recv_raw_delta_ns", "Int64"}},
       "trace_id, send_host, send_ns"},
      {"detaches",
       {{"trace_id", "UInt64"},
        {"host", "UInt16"},
        {"ts_ns", "UInt64"},
        {"function_id", "UInt32"},
        {"reason", "String"},
        {"calls", "UInt64"},
        {"total_ns", "UInt64"}},
       "trace_id, ts_ns"},
      {"traces",
       {{"trace_id", "UInt64"},
        {"host", "UInt16"},
        {"host_name", "String"},
        {"boot_id", "String"},
        {"machine_id", "String"},
        {"source", "String"},
        {"command", "String"},
        {"pid", "UInt32"},
        {"kernel", "String"},
        {"atrace_version", "String"},
        {"kernel_events", "String"},
        {"start_ns", "UInt64"},
        {"end_ns", "UInt64"},
        {"start_realtime_ns", "UInt64"},
        {"events", "UInt64"},
        {"lost_events", "UInt64"},
        {"calls", "UInt64"},
        {"merged", "UInt8"},
        {"clock_reference", "UInt16"},
        {"clock_connected", "UInt8"},
        {"clock_largest_shift_ns", "Int64"}},
       "trace_id, host"},
  };
  return defs;
}

uint64_t TableCounts::of(const char* table) const {
  const auto& defs = table_defs();
  for (size_t i = 0; i < defs.size() && i < rows.size(); ++i)
    if (std::string(defs[i].name) == table) return rows[i];
  return 0;
}

std::string table_schema(const TableDef& t, const std::string& db) {
  std::string s = "CREATE TABLE IF NOT EXISTS ";
  if (!db.empty()) s += db + ".";
  s += t.name;
  s += "\n(\n";
  for (size_t i = 0; i < t.columns.size(); ++i) {
    s += "    " + std::string(t.columns[i].name) + " " + t.columns[i].type;
    s += i + 1 < t.columns.size() ? ",\n" : "\n";
  }
  s += ")\nENGINE = MergeTree()\nPARTITION BY trace_id\nORDER BY (";
  s += t.order_by;
  s += ");\n";
  return s;
}

std::string tables_schema_sql(const std::string& db) {
  std::string s =
      "-- atrace's typed tables (docs/tables.md), for ClickHouse 18.16 and later.\n"
      "-- Time stamps are UInt64 nanoseconds of CLOCK_MONOTONIC (a merged\n"
      "-- trace's: on its corrected time line).\n";
  if (!db.empty()) s += "CREATE DATABASE IF NOT EXISTS " + db + ";\n";
  for (const auto& t : table_defs()) s += "\n" + table_schema(t, db);
  return s;
}

uint64_t trace_id(formats::TraceReader& reader, const std::string& salt) {
  XXH3_state_t* st = XXH3_createState();
  XXH3_64bits_reset(st);
  const formats::TraceHeader& h = reader.header();
  for (const std::string* s : {&h.atrace_version, &h.command_line, &h.target_command,
                               &h.kernel_events, &h.host, &h.kernel})
    add_str(st, *s);
  for (uint64_t v :
       {uint64_t{h.target_pid}, h.start_mono_ns, h.start_real_ns, h.end_mono_ns, h.end_real_ns})
    add_u64(st, v);
  for (const auto& host : reader.hosts()) {
    add_str(st, host.boot_id);
    add_str(st, host.machine_id);
    add_str(st, host.host_name);
  }
  for (const auto& p : reader.probes()) {
    add_u64(st, p.id);
    add_str(st, p.name);
    add_str(st, p.module);
    add_str(st, p.build_id);
  }
  add_u64(st, reader.event_count());
  add_str(st, salt);
  const uint64_t id = XXH3_64bits_digest(st);
  XXH3_freeState(st);
  return id;
}

TableCounts export_tables(formats::TraceReader& reader, uint64_t trace_id, TableSink& sink,
                          size_t batch_rows) {
  CallReplay replay(reader.probes());
  const RawClock raw(reader.corrections());
  TablesBuilder b(trace_id, sink, batch_rows, raw, host_machines(reader.hosts()));
  replay.listen(b);
  reader.rewind();
  formats::Event ev;
  while (reader.next(ev)) replay.add(ev);
  replay.finish(reader.header().end_mono_ns);
  b.write_pairs();

  for (const auto& p : reader.processes()) {
    Row r = b.row(kProcesses);
    r.u(trace_id).u(p.host).u(p.pid).u(p.ns_pid).u(p.pid_ns).u(p.mnt_ns);
    r.s(p.cgroup).s(p.name).s(p.root);
  }
  std::map<uint64_t, const formats::ThreadInfo*> infos;
  for (const auto& t : reader.threads()) infos[formats::thread_key(t.host, t.tid)] = &t;
  std::map<uint16_t, uint64_t> host_events, host_lost, host_first, host_last;
  for (const auto& [key, t] : replay.threads()) {
    std::string name = t.comm;
    if (auto it = infos.find(key); name.empty() && it != infos.end()) name = it->second->name;
    Row r = b.row(kThreads);
    r.u(trace_id).u(t.host).u(t.tid).u(t.pid).s(name).u(t.first_ts).u(t.last_ts).u(t.events);
    r.u(t.gaps).u(t.lost);
    host_events[t.host] += t.events;
    host_lost[t.host] += t.lost;
    if (!host_first.count(t.host) || t.first_ts < host_first[t.host])
      host_first[t.host] = t.first_ts;
    host_last[t.host] = std::max(host_last[t.host], t.last_ts);
  }
  const FunctionNames names(reader.probes());
  for (const auto& p : reader.probes()) {
    Row r = b.row(kFunctions);
    r.u(trace_id).u(p.id).s(formats::to_string(p.kind)).s(p.name);
    r.s(names.short_of(p.name, p.module)).s(p.module).s(p.path).s(p.build_id).u(p.address);
    r.s(formats::to_string(p.path_kind));
  }
  for (size_t t = 0; t < kTraces; ++t) b.flush(t);

  // The recordings, last: a load cut short has no `traces` row.
  const formats::TraceHeader& h = reader.header();
  const formats::Corrections* corr = reader.corrections();
  const auto& hosts = reader.hosts();
  const size_t n = std::max<size_t>(hosts.size(), 1);
  for (size_t i = 0; i < n; ++i) {
    const uint16_t host = static_cast<uint16_t>(i);
    const formats::HostClocks* clocks = i < hosts.size() ? &hosts[i] : nullptr;
    const formats::MergedHost* merged = corr && i < corr->hosts.size() ? &corr->hosts[i] : nullptr;
    Row r = b.row(kTraces);
    r.u(trace_id).u(host);
    r.s(clocks && !clocks->host_name.empty() ? clocks->host_name : h.host);
    r.s(clocks ? clocks->boot_id : std::string()).s(clocks ? clocks->machine_id : std::string());
    r.s(merged ? merged->source : std::string());
    r.s(merged ? merged->command : h.target_command).u(merged ? 0 : h.target_pid);
    r.s(merged ? merged->kernel : h.kernel).s(h.atrace_version).s(h.kernel_events);
    const uint64_t first = host_first.count(host) ? host_first[host] : 0;
    const uint64_t last = host_last.count(host) ? host_last[host] : 0;
    r.u(merged || !h.start_mono_ns ? first : h.start_mono_ns);
    r.u(merged || !h.end_mono_ns ? last : h.end_mono_ns);
    r.u(start_realtime(clocks, h)).u(host_events[host]).u(host_lost[host]).u(b.calls_of(host));
    r.u(corr != nullptr).u(corr ? corr->reference : 0).u(merged ? merged->connected : 1);
    r.i(merged ? merged->largest_shift_ns : 0);
  }
  b.flush(kTraces);
  return b.counts();
}

}  // namespace atrace::analysis
