// The JSON report: the stable, documented interface of `atrace report`
// (docs/report-json.md). Fields are only ever added, never renamed or
// removed; every time is an integer in nanoseconds.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <vector>

#include "output/arg_text.h"
#include "output/json_stream.h"
#include "output/report.h"

namespace atrace::analysis {
namespace {

// Keys in the order written: the documented order, easier to read.
using json = nlohmann::ordered_json;

// The kernel numbers are always written (0 without kernel events), so a
// consumer need not know whether the trace had them.
json stats_fields(const FunctionStats& f) {
  const KernelTimes& k = f.kernel;
  const KernelTimes& s = f.self_kernel;
  return json{{"calls", f.calls},
              {"unfinished", f.unfinished},
              {"unwound", f.unwound},
              {"abandoned", f.abandoned},
              {"untimed", f.untimed},
              {"untimed_stack_switch", f.switched},
              {"untimed_given_back", f.given_back},
              {"total_ns", f.total_ns},
              {"self_ns", f.self_ns},
              {"min_ns", f.min_ns},
              {"max_ns", f.max_ns},
              {"avg_ns", f.avg_ns()},
              {"offcpu_ns", k.offcpu_ns()},
              {"offcpu_blocked_ns", k.offcpu_blocked_ns},
              {"offcpu_runnable_ns", k.offcpu_runnable_ns},
              {"syscall_ns", k.syscall_ns},
              {"syscalls", k.syscalls},
              {"faults", k.faults},
              {"self_offcpu_ns", s.offcpu_ns()},
              {"self_offcpu_blocked_ns", s.offcpu_blocked_ns},
              {"self_offcpu_runnable_ns", s.offcpu_runnable_ns},
              {"self_syscall_ns", s.syscall_ns},
              {"self_syscalls", s.syscalls},
              {"self_faults", s.faults}};
}

// The process table's row (docs/report-json.md): 0 and "" where unknown.
json process_row(const formats::ProcessInfo& p) {
  return json{{"pid", p.pid},       {"ns_pid", p.ns_pid}, {"pid_ns", p.pid_ns},
              {"mnt_ns", p.mnt_ns}, {"cgroup", p.cgroup}, {"container", p.name},
              {"root", p.root}};
}

json thread_row(const ThreadSummary& t, const formats::ProcessInfo* proc) {
  const KernelTimes& k = t.kernel;
  return json{{"tid", t.tid},
              {"pid", t.pid},
              {"ns_pid", proc ? json(proc->ns_pid) : json(nullptr)},
              {"container", proc ? json(proc->name) : json(nullptr)},
              {"name", t.name},
              {"events", t.events},
              {"oncpu_ns", t.oncpu_ns},
              {"offcpu_ns", k.offcpu_ns()},
              {"offcpu_blocked_ns", k.offcpu_blocked_ns},
              {"offcpu_runnable_ns", k.offcpu_runnable_ns},
              {"syscall_ns", k.syscall_ns},
              {"syscalls", k.syscalls},
              {"faults", k.faults},
              {"partial", t.partial}};
}

json syscall_row(const SyscallStats& r) {
  return json{{"function", r.function}, {"module", r.module},
              {"syscall", r.name},      {"nr", r.nr},
              {"count", r.count},       {"total_ns", r.total_ns},
              {"avg_ns", r.avg_ns()},   {"max_ns", r.max_ns},
              {"errors", r.errors}};
}

// A relevance filter's decision; its time since the recording's start.
json detached_row(const DetachedFunction& d, const FunctionNames& names, uint64_t start,
                  const formats::ProbeCosts& costs) {
  return json{{"name", d.name},
              {"short_name", names.short_of(d.name, d.module)},
              {"module", d.module},
              {"time_ns", d.ts > start ? d.ts - start : 0},
              {"rule", formats::to_string(d.reason)},
              {"calls", d.calls},
              {"mean_ns", d.mean_ns()},
              {"net_mean_ns", d.net_mean_ns(costs)},
              {"path", formats::to_string(d.path)},
              {"total_ns", d.total_ns}};
}

// `per_thread`: with --threads, the function's rows of Profile::per_thread, in
// its order (by tid).
json function_row(const FunctionStats& f, const Profile& p,
                  const std::vector<const FunctionStats*>* per_thread) {
  json row = {
      {"name", f.name}, {"short_name", p.names.short_of(f.name, f.module)}, {"module", f.module}};
  row.update(stats_fields(f));
  row["detached"] = f.detached;
  row["partial"] = f.partial;
  if (per_thread) {
    json per = json::array();
    for (const FunctionStats* tp : *per_thread) {
      const FunctionStats& t = *tp;
      json r = {{"tid", t.tid}};
      r.update(stats_fields(t));
      r["partial"] = t.partial;
      per.push_back(std::move(r));
    }
    row["per_thread"] = std::move(per);
  }
  return row;
}

// --group-by: {"by": "arg1", "functions": [{name, short_name, module,
// values: [{value, calls, total_ns, avg_ns}]}]}; a value as `script`
// spells it, an integer also as a number.
json groups_doc(const ValueGroups& g, const Profile& p) {
  json functions = json::array();
  for (const auto& f : g.functions) {
    json row;
    auto it = std::find_if(p.functions.begin(), p.functions.end(),
                           [&](const FunctionStats& s) { return s.id == f.id; });
    if (it != p.functions.end()) {
      row["name"] = it->name;
      row["short_name"] = p.names.short_of(it->name, it->module);
      row["module"] = it->module;
    }
    json values = json::array();
    for (const auto& v : f.groups) {
      std::string text;
      append_arg_value(text, v.value);
      json r = {{"value", text},
                {"calls", v.calls},
                {"total_ns", v.total_ns},
                {"avg_ns", v.calls ? v.total_ns / v.calls : 0}};
      if (!v.value.is_string)
        r["number"] = v.value.is_signed ? json(v.value.svalue()) : json(v.value.value);
      values.push_back(std::move(r));
    }
    row["values"] = std::move(values);
    functions.push_back(std::move(row));
  }
  return json{{"by", slot_name(g.slot)}, {"functions", std::move(functions)}};
}

}  // namespace

void write_json(const ReportInput& in, const ReportOptions& opt, const JsonStream::Sink& sink) {
  const auto& h = in.header;
  const auto& p = in.profile;
  JsonStream doc(sink);
  doc.member("report_version", 1);
  doc.member("atrace_version", h.atrace_version);
  doc.member("command", h.target_command);
  doc.member("pid", h.target_pid);
  doc.member("start_realtime_ns", h.start_real_ns);
  doc.member("duration_ns", recording_duration_ns(h, p));
  doc.member("kernel_events", h.kernel_events);
  doc.member("kernel_limits", h.kernel_limits);
  doc.member("events", p.events);
  doc.member("lost_events", p.lost_known ? json(p.lost_events) : json(nullptr));
  doc.member("orphan_exits", p.orphan_exits);
  doc.member("compensated", opt.compensated);
  doc.member("probe_cost_ns", json{{"nop5", h.probe_cost_nop5_ns},
                                   {"emulated", h.probe_cost_emulated_ns},
                                   {"single_step", h.probe_cost_singlestep_ns}});
  doc.member("probe_inside_ns", json{{"nop5", h.probe_inside_nop5_ns},
                                     {"emulated", h.probe_inside_emulated_ns},
                                     {"single_step", h.probe_inside_singlestep_ns}});
  if (opt.compensated)
    doc.member("compensation_clamped", json{{"calls", p.compensation.clamped_calls},
                                            {"residual_ns", p.compensation.residual_ns}});

  std::vector<FunctionStats> rows = p.functions;
  sort_functions(rows, opt.sort, opt.then_sort);
  // --threads: each function's per-thread rows, found in one pass (not
  // one pass over every thread's rows for each function).
  std::map<uint32_t, std::vector<const FunctionStats*>> per_thread;
  if (opt.threads)
    for (const auto& t : p.per_thread) per_thread[t.id].push_back(&t);
  static const std::vector<const FunctionStats*> none;
  // A merged trace: each function, thread and process row names its host.
  auto host_of = [&](uint16_t i) { return i < in.hosts.size() ? in.hosts[i] : std::string(); };
  // Row by row: with --threads a function's row holds one row per thread
  // that called it, and all of them together are the largest part.
  doc.begin_array("functions");
  for (const auto& f : rows) {
    const std::vector<const FunctionStats*>* per = nullptr;
    if (opt.threads) {
      auto it = per_thread.find(f.id);
      per = it != per_thread.end() ? &it->second : &none;
    }
    json row = function_row(f, p, per);
    if (!in.hosts.empty()) row["host"] = host_of(f.host);
    doc.element(row);
  }
  doc.end_array();

  doc.begin_array("threads");
  for (const auto& t : p.threads) {
    json row = thread_row(t, in.process(t.pid, t.host));
    if (!in.hosts.empty()) row["host"] = host_of(t.host);
    doc.element(row);
  }
  doc.end_array();
  json processes = json::array();
  for (const formats::ProcessInfo* proc : in.shown_processes()) {
    processes.push_back(process_row(*proc));
    if (!in.hosts.empty()) processes.back()["host"] = host_of(proc->host);
  }
  doc.member("processes", processes);
  if (has_syscalls(in)) {
    json syscalls = json::array();
    for (const auto& r : p.syscalls) syscalls.push_back(syscall_row(r));
    doc.member("syscalls", syscalls);
  }
  if (has_messages(in)) {
    json messages = json::array();
    for (const auto& r : p.messages) {
      json row = {{"function", r.function},
                  {"module", r.module},
                  {"protocol", r.protocol},
                  {"peer", r.peer},
                  {"sent", r.sent},
                  {"sent_bytes", r.sent_bytes},
                  {"received", r.received},
                  {"received_bytes", r.received_bytes},
                  {"sent_matched", r.sent_matched},
                  {"received_matched", r.received_matched},
                  {"latencies", r.latencies}};
      // Only measured latencies: none is made up for unmatched messages.
      row["latency_p50_ns"] = r.latencies ? json(r.latency_p50_ns) : json(nullptr);
      row["latency_p99_ns"] = r.latencies ? json(r.latency_p99_ns) : json(nullptr);
      if (!in.hosts.empty()) row["host"] = host_of(r.host);
      messages.push_back(std::move(row));
    }
    doc.member("messages", messages);
  }
  json probes = json::array();
  for (const auto& hits : p.probes) {
    json row = {{"provider", hits.provider},
                {"name", hits.name},
                {"module", hits.module},
                {"count", hits.count}};
    if (hits.has_values) row["values"] = hits.values;
    probes.push_back(std::move(row));
  }
  doc.member("probes", probes);
  if (in.groups) doc.member("groups", groups_doc(*in.groups, p));
  json detached = json::array();
  uint64_t start = h.start_mono_ns ? h.start_mono_ns : p.first_ts;
  const formats::ProbeCosts costs = formats::probe_costs(h);
  for (const auto& d : p.detached) detached.push_back(detached_row(d, p.names, start, costs));
  doc.member("detached", detached);
  doc.member("warnings", in.warnings);
  doc.end();
}

std::string render_json(const ReportInput& in, const ReportOptions& opt) {
  std::string out;
  write_json(in, opt, [&out](std::string_view piece) { out += piece; });
  return out;
}

}  // namespace atrace::analysis
