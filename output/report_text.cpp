// The text report: one summary line, a table of functions (or one table per
// thread with --threads), and footnotes for whatever makes the numbers less
// than exact (unfinished calls, exits without entries, lost events,
// functions the relevance filter detached, listed with when and why), so a
// reader never takes partial figures for complete ones.
#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <sstream>

#include "base/plural.h"
#include "output/arg_text.h"
#include "output/report.h"
#include "output/report_table.h"
#include "output/report_text.h"

namespace atrace::analysis {

std::string format_duration(uint64_t ns) {
  if (ns < 1000) return std::to_string(ns) + " ns";
  static const char* const kUnits[] = {"us", "ms", "s"};
  double v = static_cast<double>(ns);
  int u = 0;
  for (;; u++) {
    v /= 1000.0;
    if (v < 999.5 || u == 2) break;  // 999.5 would print as "1000"
  }
  const char* form = v >= 99.95 ? "%.0f %s" : v >= 9.995 ? "%.1f %s" : "%.2f %s";
  char buf[48];
  std::snprintf(buf, sizeof buf, form, v, kUnits[u]);
  return buf;
}

bool has_kernel_events(const formats::TraceHeader& h) { return !h.kernel_events.empty(); }

constexpr std::pair<std::string_view, Field> kFields[] = {
    {"calls", Field::Calls},       {"total", Field::Total},
    {"self", Field::Self},         {"avg", Field::Avg},
    {"min", Field::Min},           {"max", Field::Max},
    {"offcpu", Field::Offcpu},     {"selfoff", Field::SelfOffcpu},
    {"systime", Field::SysTime},   {"selfsys", Field::SelfSysTime},
    {"syscalls", Field::Syscalls}, {"faults", Field::Faults}};

std::optional<Field> parse_field(std::string_view s) {
  for (const auto& [name, field] : kFields)
    if (name == s) return field;
  return std::nullopt;
}

std::string field_names() {
  std::string s;
  for (const auto& [name, field] : kFields) s += (s.empty() ? "" : ", ") + std::string(name);
  return s;
}

namespace {
bool recorded_group(const formats::TraceHeader& h, std::string_view group) {
  std::string_view groups = h.kernel_events;
  while (!groups.empty()) {
    auto comma = groups.find(',');
    if (groups.substr(0, comma) == group) return true;
    if (comma == std::string_view::npos) break;
    groups.remove_prefix(comma + 1);
  }
  return false;
}
}  // namespace

bool has_syscalls(const ReportInput& in) {
  return !in.profile.syscalls.empty() || recorded_group(in.header, "syscalls");
}

bool has_messages(const ReportInput& in) {
  return !in.profile.messages.empty() || recorded_group(in.header, "net");
}

std::string untimed_counts(uint64_t untimed, uint64_t switched, uint64_t given_back) {
  std::string out;
  auto add = [&out](uint64_t n, UntimedReason why) {
    if (n) out += " (" + std::to_string(n) + " not timed: " + untimed_text(why) + ")";
  };
  add(untimed - switched - given_back, UntimedReason::NestingLimit);
  add(switched, UntimedReason::StackSwitch);
  add(given_back, UntimedReason::GivenBack);
  return out;
}

namespace {

// After the name of a function whose probes a relevance filter removed.
constexpr const char* kDetachedMark = " (detached)";
constexpr const char* kPartialMark = " (partial)";

// Which kernel groups the trace recorded (header.kernel_events).
struct Recorded {
  bool sched = false, syscalls = false, faults = false;
};
Recorded recorded_groups(const ReportInput& in) {
  Recorded r;
  std::string_view groups = in.header.kernel_events;
  while (!groups.empty()) {
    auto comma = groups.find(',');
    std::string_view g = groups.substr(0, comma);
    r.sched |= g == "sched";
    r.faults |= g == "faults";
    if (comma == std::string_view::npos) break;
    groups.remove_prefix(comma + 1);
  }
  // (A trace without kernel events has no system calls, whatever the
  // profile holds.)
  r.syscalls = !in.header.kernel_events.empty() && has_syscalls(in);
  return r;
}

// The default columns: the times always, and a kernel group's columns only
// when it was recorded (inclusive ones: the self ones, and the
// blocked/runnable split, are a --fields or JSON matter), so the common
// table stays within 100 columns.
std::vector<Field> default_fields(const Recorded& r) {
  std::vector<Field> f = {Field::Calls, Field::Total, Field::Self,
                          Field::Avg,   Field::Min,   Field::Max};
  if (r.sched) f.push_back(Field::Offcpu);
  if (r.syscalls) f.insert(f.end(), {Field::SysTime, Field::Syscalls});
  if (r.faults) f.push_back(Field::Faults);
  return f;
}

const char* heading(Field f) {
  switch (f) {
    case Field::Calls: return "Calls";
    case Field::Total: return "Total";
    case Field::Self: return "Self";
    case Field::Avg: return "Avg";
    case Field::Min: return "Min";
    case Field::Max: return "Max";
    case Field::Offcpu: return "Off-CPU";
    case Field::SelfOffcpu: return "Self off";
    case Field::SysTime: return "Sys time";
    case Field::SelfSysTime: return "Self sys";
    case Field::Syscalls: return "Syscalls";
    case Field::Faults: return "Faults";
  }
  return "";
}

// A cell: "-" for what the trace did not measure, never a 0 that reads as
// a measurement.
std::string cell(const FunctionStats& f, Field field, const Recorded& r) {
  constexpr const char* kNotMeasured = "-";
  switch (field) {
    case Field::Calls: {
      std::string calls = std::to_string(f.calls);
      if (f.unfinished) calls += " (" + std::to_string(f.unfinished) + " unfinished)";
      if (f.unwound) calls += " (" + std::to_string(f.unwound) + " unwound)";
      if (f.abandoned) calls += " (" + std::to_string(f.abandoned) + " abandoned)";
      calls += untimed_counts(f.untimed, f.switched, f.given_back);
      return calls;
    }
    case Field::Total: return format_duration(f.total_ns);
    case Field::Self: return format_duration(f.self_ns);
    // Of finished calls only (profile.h): none finished, none to show.
    case Field::Avg: return f.finished_calls() ? format_duration(f.avg_ns()) : kNotMeasured;
    case Field::Min: return f.finished_calls() ? format_duration(f.min_ns) : kNotMeasured;
    case Field::Max: return f.finished_calls() ? format_duration(f.max_ns) : kNotMeasured;
    case Field::Offcpu: return r.sched ? format_duration(f.kernel.offcpu_ns()) : kNotMeasured;
    case Field::SelfOffcpu:
      return r.sched ? format_duration(f.self_kernel.offcpu_ns()) : kNotMeasured;
    case Field::SysTime: return r.syscalls ? format_duration(f.kernel.syscall_ns) : kNotMeasured;
    case Field::SelfSysTime:
      return r.syscalls ? format_duration(f.self_kernel.syscall_ns) : kNotMeasured;
    case Field::Syscalls: return r.syscalls ? std::to_string(f.kernel.syscalls) : kNotMeasured;
    case Field::Faults: return r.faults ? std::to_string(f.kernel.faults) : kNotMeasured;
  }
  return "";
}

void print_functions(std::ostream& out, std::vector<FunctionStats> rows, const FunctionNames& names,
                     const std::string& main, const ReportOptions& opt, const Recorded& recorded,
                     size_t max_rows = 0) {
  sort_functions(rows, opt.sort, opt.then_sort);
  if (max_rows && rows.size() > max_rows) rows.resize(max_rows);
  const std::vector<Field> fields = opt.fields.empty() ? default_fields(recorded) : opt.fields;
  Table t;
  t.bold_header(opt.color);
  std::vector<std::string> head;
  for (Field f : fields) head.push_back(heading(f));
  head.push_back("Function");
  t.add(std::move(head));
  for (const auto& f : rows) {
    std::vector<std::string> row;
    for (Field field : fields) row.push_back(cell(f, field, recorded));
    row.push_back(display_name(names, f.name, f.module, main) + (f.detached ? kDetachedMark : "") +
                  (f.partial ? kPartialMark : ""));
    t.add(std::move(row));
  }
  t.print(out);
}

// The --threads line under a thread's heading, when kernel events were
// recorded.
void print_thread_kernel(std::ostream& out, const ThreadSummary& th) {
  const KernelTimes& k = th.kernel;
  out << "  on-CPU " << format_duration(th.oncpu_ns) << ", off-CPU "
      << format_duration(k.offcpu_ns()) << " (blocked " << format_duration(k.offcpu_blocked_ns)
      << ", runnable " << format_duration(k.offcpu_runnable_ns) << "), "
      << base::plural(k.syscalls, "system call") << " (" << format_duration(k.syscall_ns) << "), "
      << base::plural(k.faults, "fault") << "\n";
}

void print_summary(std::ostream& out, const ReportInput& in) {
  const auto& h = in.header;
  const auto& p = in.profile;
  out << "Trace of ";
  if (!h.target_command.empty()) out << h.target_command << " ";
  out << "(pid " << h.target_pid << "): " << format_duration(recording_duration_ns(h, p)) << ", "
      << p.events << " events, "
      << (p.lost_known ? std::to_string(p.lost_events) + " lost" : std::string("lost: unknown"))
      << "\n";
  // Where each traced process ran, when it was not simply on the host:
  // the pid a container shows for it, its cgroup, container or service.
  for (const formats::ProcessInfo* proc : in.shown_processes())
    if (worth_showing(*proc)) out << "  " << process_description(*proc) << "\n";
}

}  // namespace

std::string compensation_line(const formats::TraceHeader& h, const CompensationResidual& r) {
  auto path = [](const char* name, uint64_t whole, uint64_t inside) {
    return format_duration(whole) + " per " + name + " call (" + format_duration(inside) +
           " inside it)";
  };
  std::string line =
      "compensated: " + path("nop5", h.probe_cost_nop5_ns, h.probe_inside_nop5_ns) + ", " +
      path("emulated", h.probe_cost_emulated_ns, h.probe_inside_emulated_ns) + ", " +
      path("single-step", h.probe_cost_singlestep_ns, h.probe_inside_singlestep_ns) +
      "\n  (a traced call's entry + return probes, calibrated when recording started: the "
      "part inside it taken out of its own time, the whole out of its callers')";
  if (r.clamped_calls)
    line += "\n  " + std::to_string(r.clamped_calls) +
            " call(s) measured shorter than their probes' calibrated cost, clamped at 0 (" +
            format_duration(r.residual_ns) + " below zero in all)";
  return line;
}

namespace {

// The relevance filters' decisions: which function, how long after the
// start, by which rule, and the filter's calls and mean until then.
void print_detached(std::ostream& out, const ReportInput& in, const std::string& main) {
  const Profile& p = in.profile;
  if (p.detached.empty()) return;
  uint64_t start = in.header.start_mono_ns ? in.header.start_mono_ns : p.first_ts;
  Table t({1});
  const formats::ProbeCosts costs = formats::probe_costs(in.header);
  t.add({"After", "Rule", "Calls", "Mean", "Net", "Function"});
  for (const auto& d : p.detached)
    t.add({format_duration(d.ts > start ? d.ts - start : 0), formats::to_string(d.reason),
           std::to_string(d.calls), format_duration(d.mean_ns()),
           format_duration(d.net_mean_ns(costs)), display_name(p.names, d.name, d.module, main)});
  std::ostringstream table;
  t.print(table);
  out << "\nDetached by the relevance filter:\n";
  std::istringstream lines(table.str());
  for (std::string line; std::getline(lines, line);) out << "  " << line << '\n';
}

// USDT probes: hits per probe, and per value of the first string argument
// (the most frequent first, at most kValuesShown of them).
void print_probes(std::ostream& out, const ReportInput& in, const std::string& main) {
  constexpr size_t kValuesShown = 20;
  const Profile& p = in.profile;
  if (p.probes.empty()) return;
  Table t({1});
  t.add({"Hits", "Probe"});
  for (const auto& h : p.probes) {
    t.add({std::to_string(h.count),
           display_name(h.provider.empty() ? h.name : h.provider + ":" + h.name, h.module, main)});
    std::vector<std::pair<std::string, uint64_t>> values(h.values.begin(), h.values.end());
    std::stable_sort(values.begin(), values.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    for (size_t i = 0; i < values.size() && i < kValuesShown; i++)
      t.add({std::to_string(values[i].second), "  \"" + values[i].first + "\""});
    if (values.size() > kValuesShown)
      t.add({"", "  ... " + std::to_string(values.size() - kValuesShown) + " more values"});
  }
  std::ostringstream table;
  t.print(table);
  out << "\nUSDT probes:\n";
  std::istringstream lines(table.str());
  for (std::string line; std::getline(lines, line);) out << "  " << line << '\n';
}

// --group-by: per function, its calls by value (the most time first, at
// most kValuesShown values): calls, total, avg.
void print_value_groups(std::ostream& out, const ReportInput& in, const std::string& main) {
  constexpr size_t kValuesShown = 20;
  if (!in.groups) return;
  const Profile& p = in.profile;
  const std::string key = slot_name(in.groups->slot);
  out << "\nCalls by " << key << ":\n";
  if (in.groups->functions.empty()) {
    out << "  no function recorded " << key << " (record --args/--retval)\n";
    return;
  }
  Table t({3});
  t.add({"Calls", "Total", "Avg", "Function", key});
  for (const auto& f : in.groups->functions) {
    auto it = std::find_if(p.functions.begin(), p.functions.end(),
                           [&](const FunctionStats& s) { return s.id == f.id; });
    const std::string name = it == p.functions.end()
                                 ? "<probe " + std::to_string(f.id) + ">"
                                 : display_name(p.names, it->name, it->module, main);
    for (size_t i = 0; i < f.groups.size() && i < kValuesShown; i++) {
      const ValueGroup& g = f.groups[i];
      std::string value;
      append_arg_value(value, g.value);
      t.add({std::to_string(g.calls), format_duration(g.total_ns),
             format_duration(g.total_ns / g.calls), i ? "" : name, value});
    }
    if (f.groups.size() > kValuesShown)
      t.add({"", "", "", "",
             "... " + std::to_string(f.groups.size() - kValuesShown) + " more values"});
  }
  std::ostringstream table;
  t.print(table);
  std::istringstream lines(table.str());
  for (std::string line; std::getline(lines, line);) out << "  " << line << '\n';
}

void print_footnotes(std::ostream& out, const Profile& p, bool kernel_columns, bool syscalls,
                     bool detached_marks, const std::vector<std::string>& kernel_limits) {
  bool unfinished = std::any_of(p.functions.begin(), p.functions.end(),
                                [](const FunctionStats& f) { return f.unfinished > 0; });
  std::vector<std::string> notes;
  if (kernel_columns && !syscalls)
    notes.push_back(
        "Off-CPU: time switched out, blocked or waiting for a CPU; Self: outside traced\n"
        "  callees; Faults: user page faults, minor and major alike; system calls were not\n"
        "  recorded (record --kernel=+syscalls adds them)");
  else if (kernel_columns)
    notes.push_back(
        "Off-CPU: time switched out, blocked or waiting for a CPU; Sys time: inside system\n"
        "  calls, blocked time included (so it overlaps Off-CPU); Self: outside traced callees;\n"
        "  Faults: user page faults, minor and major alike");
  if (detached_marks && !p.detached.empty())
    notes.push_back(
        "(detached): the relevance filter removed the function's probes while recording;\n"
        "  its numbers are partial, counted up to the detach time; Net: the mean the\n"
        "  filter judged, less what the probes add inside a call on its path");
  if (unfinished)
    notes.push_back(
        "unfinished: calls still running when the recording stopped or their thread exited\n"
        "  (closed then: their times are lower bounds, in Total and Self but not in Min, Avg\n"
        "  and Max), or open where their thread lost events");
  if (std::any_of(p.functions.begin(), p.functions.end(),
                  [](const FunctionStats& f) { return f.unwound > 0; }))
    notes.push_back(
        "unwound: calls left by an exception (closed at the catch) or by pthread_exit or\n"
        "  cancellation (closed at the thread's exit): docs/exceptions.md");
  if (std::any_of(p.functions.begin(), p.functions.end(),
                  [](const FunctionStats& f) { return f.abandoned > 0; }))
    notes.push_back(
        "abandoned: calls left by longjmp/siglongjmp, closed where their thread was next\n"
        "  seen below them (docs/safety.md)");
  if (std::any_of(p.functions.begin(), p.functions.end(),
                  [](const FunctionStats& f) { return f.untimed > 0; }))
    notes.push_back(
        "not timed: calls whose return cannot be seen, nested deeper than the kernel's 64\n"
        "  return probes per thread, open when their thread switched stacks (swapcontext,\n"
        "  setcontext: closed at the switch), or whose return address the fast path gave\n"
        "  back to a stack walk whose end it did not see: counted, left out of Total, Self,\n"
        "  Avg, Min and Max (docs/safety.md, docs/fast-path.md)");
  if (p.orphan_exits)
    notes.push_back(
        std::to_string(p.orphan_exits) +
        " exits without a recorded entry ignored\n"
        "  (calls already running when the recording started, or whose entry was lost)");
  if (std::any_of(p.functions.begin(), p.functions.end(),
                  [](const FunctionStats& f) { return f.partial; }))
    notes.push_back(
        "(partial): events of the function's thread were lost, or lost on a CPU where it ran:\n"
        "  some of its calls may lack their entry or exit, so its numbers may be incomplete");
  if (p.lost_events)
    notes.push_back(std::to_string(p.lost_events) +
                    " events lost (ring buffer full): figures may be incomplete;\n"
                    "  a larger --buffer-size may help");
  // What the recording kernel lacked, and which numbers that touches.
  for (const auto& l : kernel_limits) notes.push_back("kernel: " + l);
  if (notes.empty()) return;
  out << '\n';
  for (const auto& n : notes) out << n << '\n';
}

}  // namespace

const formats::ProcessInfo* ReportInput::process(uint32_t pid, uint16_t host) const {
  if (!processes) return nullptr;
  for (const auto& p : *processes)
    if (p.pid == pid && p.host == host) return &p;
  return nullptr;
}

std::vector<const formats::ProcessInfo*> ReportInput::shown_processes() const {
  std::vector<const formats::ProcessInfo*> out;
  if (!processes) return out;
  for (const auto& proc : *processes) {
    const bool traced = std::any_of(
        profile.threads.begin(), profile.threads.end(),
        [&](const ThreadSummary& t) { return t.pid == proc.pid && t.host == proc.host; });
    if (traced || (proc.pid == header.target_pid && proc.host == 0)) out.push_back(&proc);
  }
  return out;
}

std::string render_text(const ReportInput& in, const ReportOptions& opt) {
  std::ostringstream out;
  write_text(in, opt, out);
  return out.str();
}

void write_text(const ReportInput& in, const ReportOptions& opt, std::ostream& out) {
  const Profile& p = in.profile;
  print_summary(out, in);
  if (opt.compensated) out << compensation_line(in.header, in.profile.compensation) << '\n';
  std::string main = main_module(in.header, p);
  bool kernel = has_kernel_events(in.header);
  const bool syscalls = has_syscalls(in);
  bool columns = false;  // whether a table with kernel columns was printed
  if (opt.syscalls) {
    out << '\n';
    print_syscalls(out, in, main);
  } else if (p.functions.empty() && !p.probes.empty() && !opt.threads) {
    // USDT probes alone: their table below is the report.
  } else if (p.functions.empty() && kernel && !p.threads.empty() && !opt.threads) {
    // A trace of kernel events only (no --select): their per-thread view
    // is the report, not an empty table.
    out << "\nNo function calls recorded: kernel events only (record --select=PATTERN adds "
           "function calls).\n";
    for (const auto& th : p.threads) {
      out << "\n";
      if (!in.hosts.empty() && th.host < in.hosts.size()) out << in.hosts[th.host] << ": ";
      out << "Thread " << th.tid;
      if (!th.name.empty()) out << " (" << th.name << ")";
      out << ": " << th.events << " events" << (th.partial ? kPartialMark : "") << "\n";
      print_thread_kernel(out, th);
    }
    if (syscalls && !p.syscalls.empty()) {
      out << '\n';
      print_syscalls(out, in, main);
    }
  } else if (p.functions.empty() && !(opt.threads && kernel && !p.threads.empty())) {
    // (Per-thread kernel numbers are worth showing even without calls.)
    out << "\nNo function calls recorded";
    if (p.events == 0) out << " (no events: did the selected functions run?)";
    out << ".\n";
  } else if (!opt.threads && !in.hosts.empty()) {
    // A merged trace: each host's functions (its probes) under its name.
    for (uint16_t h = 0; h < in.hosts.size(); h++) {
      std::vector<FunctionStats> rows;
      for (const auto& f : p.functions)
        if (f.host == h) rows.push_back(f);
      if (rows.empty()) continue;
      out << "\nHost " << in.hosts[h] << ":\n";
      print_functions(out, std::move(rows), p.names, main, opt, recorded_groups(in));
    }
    columns = kernel;
  } else if (!opt.threads) {
    out << '\n';
    print_functions(out, p.functions, p.names, main, opt, recorded_groups(in));
    columns = kernel;
  } else {
    // A merged trace: the threads of each host under its heading.
    std::optional<uint16_t> host;
    // Both are by host and tid: each thread's rows are the next ones of
    // per_thread (one pass, not one over all rows for each thread).
    auto next_row = p.per_thread.begin();
    for (const auto& th : p.threads) {
      while (next_row != p.per_thread.end() && next_row->tid < th.tid) ++next_row;
      std::vector<FunctionStats> rows;
      for (; next_row != p.per_thread.end() && next_row->host == th.host && next_row->tid == th.tid;
           ++next_row)
        rows.push_back(*next_row);
      if (!in.hosts.empty() && host != th.host) {
        host = th.host;
        out << "\nHost " << (th.host < in.hosts.size() ? in.hosts[th.host] : "?") << ":\n";
      }
      out << "\nThread " << th.tid;
      if (!th.name.empty()) out << " (" << th.name << ")";
      if (const formats::ProcessInfo* proc = in.process(th.pid, th.host);
          proc && worth_showing(*proc))
        out << " of " << process_description(*proc);
      out << ": " << th.events << " events" << (th.partial ? kPartialMark : "") << "\n";
      if (kernel) print_thread_kernel(out, th);
      if (rows.empty()) {
        out << "  no function calls\n";
      } else {
        print_functions(out, std::move(rows), p.names, main, opt, recorded_groups(in));
        columns = kernel;
      }
    }
  }
  if (!opt.syscalls) print_value_groups(out, in, main);
  if (!opt.syscalls) print_probes(out, in, main);
  if (!opt.syscalls) print_detached(out, in, main);
  if (!opt.syscalls && has_messages(in)) print_messages(out, in, main);
  print_footnotes(out, p, columns, syscalls, !opt.syscalls, in.header.kernel_limits);
}

std::string render_function_table(const ReportInput& in, const ReportOptions& opt,
                                  size_t max_rows) {
  std::ostringstream out;
  const Profile& p = in.profile;
  print_functions(out, p.functions, p.names, main_module(in.header, p), opt, recorded_groups(in),
                  max_rows);
  return out.str();
}

}  // namespace atrace::analysis
