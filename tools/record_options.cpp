#include "tools/record_options.h"

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <string>
#include <vector>

#include "base/diagnostics.h"
#include "tools/commands.h"
#include "tools/option_values.h"
#include "uprobes/value_spec.h"

namespace atrace::tools {

namespace {

// A ring per CPU: the kernel takes a power of two of pages; beyond 1 GiB a
// CPU, creating and touching the rings takes seconds and the memory is
// rarely there.
constexpr uint64_t kMinBufferBytes = 4096, kMaxBufferBytes = 1ull << 30;
// A fast-path lane: 1 MiB (32 Ki records) to 16 GiB (2^29 records).
constexpr uint64_t kMinFastLaneBytes = 1ull << 20, kMaxFastLaneBytes = 16ull << 30;
// --duration: up to a year.
constexpr uint64_t kMaxDurationNs = 365ull * 24 * 3600 * 1'000'000'000;

// -p PID[,PID...]: each a process id, each once (a repeated one is
// traced once), the first the trace's target_pid.
std::vector<pid_t> parse_pids(const std::string& list) {
  std::vector<pid_t> pids;
  size_t start = 0;
  while (true) {
    const size_t comma = list.find(',', start);
    const std::string item = list.substr(start, comma - start);
    const bool digits = !item.empty() && item.find_first_not_of("0123456789") == std::string::npos;
    if (!digits || item.size() > 10 || std::stoull(item) == 0 || std::stoull(item) > INT32_MAX)
      throw OptionError("-p: '" + item + "' is not a process id (-p PID or -p PID,PID,...)");
    const auto pid = static_cast<pid_t>(std::stoull(item));
    if (std::find(pids.begin(), pids.end(), pid) == pids.end()) pids.push_back(pid);
    if (comma == std::string::npos) return pids;
    start = comma + 1;
  }
}

// --fast-path[=all|hot] (docs/fast-path.md, "Hot functions"). `hot` takes
// one process, attached or launched (the recorder refuses --follow-forks).
void parse_fast_path(RecordArgs& a) {
  if (a.fast_path.empty()) return;
  if (a.fast_path == "hot") {
    a.opts.fast_path_hot = true;
  } else if (a.fast_path != "all")
    throw OptionError("--fast-path: '" + a.fast_path + "' is not all or hot");
  a.opts.fast_path = true;
}

// The values given as text, checked and converted; throws OptionError.
void parse_values(RecordArgs& a) {
  RecordOptions& o = a.opts;
  if (!a.pid.empty()) {
    o.pids = parse_pids(a.pid);
    o.pid = o.pids.front();
  }
  if (a.given.count("--cgroup") && o.cgroup.find_first_not_of(" \t") == std::string::npos)
    throw OptionError("--cgroup: empty value");
  parse_fast_path(a);
  o.attach_mode = a.attach == "multi"  ? AttachMode::Multi
                  : a.attach == "perf" ? AttachMode::Perf
                                       : AttachMode::Auto;  // CLI11 checked the name
  if (!a.duration.empty())
    o.duration_s = static_cast<double>(parse_duration(
                       "--duration", a.duration, base::BareNumber::Seconds, 1, kMaxDurationNs)) /
                   1e9;
  o.buffer_bytes = parse_bytes("--buffer-size", a.buffer_size, kMinBufferBytes, kMaxBufferBytes);
  // Lanes hold a power of two of 32-byte records: the size rounds down.
  const uint64_t lane =
      parse_bytes("--fast-path-buffer", a.fast_path_buffer, kMinFastLaneBytes, kMaxFastLaneBytes) /
      32;
  o.fast_path_lane_slots = 1;
  while (o.fast_path_lane_slots * 2 <= lane) o.fast_path_lane_slots *= 2;
  // Given, it is the user's word: nothing is judged before (no early rule).
  if (!a.filter_min_calls.empty()) {
    o.filter.min_calls = parse_count("--filter-min-calls", a.filter_min_calls, UINT32_MAX);
    o.filter.early_calls = o.filter.min_calls;
  }
  o.filter.max_calls = parse_count("--filter-max-calls", a.filter_max_calls, UINT32_MAX);
  o.filter.threshold_ns = parse_duration("--filter-threshold", a.filter_threshold,
                                         base::BareNumber::Nanoseconds, 0, UINT64_MAX);
  if (!a.filter_budget.empty())
    o.filter.budget_pct = parse_number("--filter-budget", a.filter_budget, 0, 100);
  o.stack_depth =
      static_cast<uint32_t>(parse_count("--stack-depth", a.stack_depth, kMaxStackDepth));
  if (o.stack_depth == 0)
    throw OptionError("--stack-depth: '0' is out of range (a whole number from 1 to 127)");
  // An empty list is a mistake (often a shell variable), not "everything".
  const std::pair<const char*, const std::string*> lists[] = {
      {"--select", &o.select}, {"--exclude", &o.exclude}, {"--usdt", &o.usdt},
      {"--args", &o.args},     {"--retval", &o.retval},   {"--filter-keep", &o.filter.keep},
      {"--stack", &o.stack}};
  for (const auto& [name, value] : lists)
    if (a.given.count(name) && value->find_first_not_of(" \t") == std::string::npos)
      throw OptionError(std::string(name) + ": empty value");
  // The specs' syntax now (the plan matches their selectors later).
  try {
    uprobes::parse_arg_rules(o.args);
    uprobes::parse_retval_rules(o.retval);
  } catch (const uprobes::ValueSpecError& e) {
    throw OptionError(e.what());
  }
}

}  // namespace

void add_recording_options(cli::Command cmd, RecordArgs& args) {
  cli::Option pid = cmd.option("-p,--pid", args.pid,
                               "Attach to these running processes: PID or PID,PID,...; the "
                               "recording ends when all of them have exited")
                        .type_name("PID[,PID...]");
  cli::Option cgroup = cmd.option(
      "--cgroup", args.opts.cgroup,
      "Trace every process of this cgroup v2 and its descendants, those started there later "
      "included: a directory of the cgroup v2 tree (/sys/fs/cgroup/system.slice/x.service) or "
      "a path relative to its root (system.slice/x.service); the recording ends when none is "
      "left");
  cgroup.type_name("PATH");
  cmd.option("--select", args.opts.select,
             "Functions to trace: comma-separated GLOB (main executable), MODULE:GLOB "
             "(shared library by file name), re:REGEX; without it, only kernel events");
  cmd.option("--exclude", args.opts.exclude,
             "Functions not to trace (same syntax; @FILE reads selectors from FILE, one a "
             "line, e.g. a previous recording's OUTPUT.exclude)");
  cmd.option("--usdt", args.opts.usdt,
             "USDT probes to record: provider:name (main executable) or "
             "MODULE:provider:name, globs allowed; append (str,int,...) to read arguments "
             "as strings, e.g. 'app:request(str,int)'; NAME__begin/NAME__end pairs are "
             "recorded as intervals");
  cmd.option("--args", args.opts.args,
             "Arguments of traced functions: SELECTORS@ARG[/TYPE],...;... with ARG arg1..arg6 "
             "(x86-64 integer registers) and TYPE i8..i64, u8..u64, x8..x64 (hex), p "
             "(pointer), s (C string, up to 127 bytes); e.g. 'parse@arg1/s,arg2/i32'. Their "
             "entry probes stay on the first instruction (docs/arguments.md)");
  cmd.option("--retval", args.opts.retval,
             "Return values of traced functions: SELECTORS[/TYPE];... (types as --args, "
             "default i64), e.g. 'parse/i32;name_of/s'");
  cmd.option("--stack", args.opts.stack,
             "User call stacks at the entry of these traced functions: SELECTORS;... (frame "
             "pointers; script prints them, report --callers names untraced callers from them; "
             "docs/stacks.md)");
  cmd.option("--stack-depth", args.stack_depth, "Frames kept per --stack call stack, 1 to 127")
      .default_text("32");
  cmd.option("--duration", args.duration,
             "Stop recording after this long (2.5, 2.5s, 500ms: seconds without a unit); a "
             "launched command then runs on untraced, and atrace waits for it to exit")
      .type_name("TIME");
  cmd.option("--buffer-size", args.buffer_size,
             "Buffer per CPU (e.g. 8M) for the function entries and exits (a lane), and half "
             "as much for the other records (a ring; without function probes, all of it)")
      .default_text("8M");
  cmd.option("--attach", args.attach,
             "How probes are attached: auto, multi (uprobe_multi links, Linux 6.6+) or "
             "perf (a perf-event link per probe)")
      .one_of({"auto", "multi", "perf"})
      .default_text("auto");
  cli::Option kernel = cmd.option(
      "--kernel", args.kernel,
      "Kernel events of the traced threads, comma-separated groups: sched (context switches, "
      "wake-ups, migrations), syscalls (entries and exits), faults (user page faults), proc "
      "(fork, exec, exit, thread names), all (those four), net (messages sent and received on "
      "TCP, UDP, unix sockets and pipes, with their addresses and TCP sequence numbers; never "
      "on by default: it is on the system call tracepoints, with the same cost as syscalls, "
      "docs/kernel-events.md); +GROUP/-GROUP change the default. Only syscalls "
      "costs traced calls: while on, every system call of the machine takes the kernel's slow "
      "path (about +0.3 us each, +0.6 us in the traced process), and so do the uprobe and "
      "uretprobe system calls of each traced call (about +0.5 us per call); the other groups "
      "cost per context switch, fault or process event only (docs/BENCHMARKS.md)");
  kernel.default_text(kDefaultKernelGroupsHelp).completes(kernel_group_names(), true, true);
  cmd.flag("--no-kernel", args.no_kernel, "Record no kernel events, only functions")
      .excludes(kernel);
  cmd.flag("--probe-at-entry", args.opts.probe_at_entry,
           "Put every entry probe on the function's first instruction. By default it goes on "
           "the cheapest instruction before the function touches its stack or branches (an "
           "emulated push or NOP after endbr64 or a mov instead of a single-stepped first "
           "instruction); `atrace list` shows where");
  cli::Option fast =
      cmd.flag("--fast-path{all}", args.fast_path,
               "Record the selected functions of the traced process in the process "
               "itself: their entries are patched to jump to trampolines that write each call "
               "into memory atrace reads, without a trap into the kernel (tens of ns a call "
               "instead of microseconds). all (the default): every selected function is patched "
               "from the start, those that cannot be are not traced; hot: the kernel's probes "
               "first, a function the relevance filter finds too hot patched instead of "
               "detached (-p PID only so far). "
               "Experimental (docs/fast-path.md)");
  cmd.option("--fast-path-buffer", args.fast_path_buffer,
             "With --fast-path: the records a CPU's lane holds, in bytes (32 a record, a power "
             "of two of them: e.g. 256M, 8 Mi records). Memory is used only for the records "
             "written and not yet read, plus 16M a CPU; a lane must hold what that CPU's "
             "threads write while atrace falls behind, or the rest is lost and counted")
      .default_text("256M")
      .type_name("SIZE")
      .needs(fast);
  cmd.flag("--follow-forks", args.opts.follow_forks,
           "Trace child processes too (functions and kernel events); recording ends when "
           "every traced process has exited");
  auto& f = args.opts.filter;
  cmd.option("--filter", args.filter,
             "Relevance filter, detaching the probes of functions that are frequent and "
             "short while recording: off, absolute (mean below --filter-threshold after "
             "--filter-min-calls calls) or relative (mean below the called functions' mean "
             "minus the threshold)")
      .one_of({"off", "absolute", "relative"})
      .default_text("absolute");
  cmd.option("--filter-threshold", args.filter_threshold,
             "Mean duration that makes a function irrelevant (e.g. 2us, 500ns)")
      .default_text("2us");
  cmd.option("--filter-min-calls", args.filter_min_calls,
             "Calls before a function can be judged (not given: 1000, or 100 for a mean far "
             "below the threshold)")
      .default_text("1000");
  cmd.option("--filter-max-calls", args.filter_max_calls,
             "Detach a function after N calls whatever its duration (0: never)")
      .default_text("0");
  cmd.option("--filter-budget", args.filter_budget,
             "Detach the costliest functions until the estimated probe overhead is under "
             "PCT % of the CPU time the traced process uses on its own, among the functions "
             "past --filter-min-calls (0: off; 100: tracing at most doubles it; 0 with "
             "--filter=off)")
      .default_text("100");
  cmd.option("--filter-keep", f.keep, "Functions never detached (selectors, as --select)");
  cmd.flag("-v,--verbose", args.opts.verbose,
           "Show the kernel's features, the time of each start-up and teardown phase, and "
           "libbpf's messages");
  cli::Option command = cmd.option("command", args.opts.command, "Command to launch (after --)");
  pid.excludes(command);
  cgroup.excludes(command);
  cgroup.excludes(pid);
  cmd.positionals_at_end();
}

int finish_recording_options(cli::Command cmd, RecordArgs& args, const char* command) {
  auto& o = args.opts;
  for (const char* name : {"--select", "--exclude", "--usdt", "--filter-keep", "--args", "--retval",
                           "--stack", "--cgroup"})
    if (cmd.given(name)) args.given.insert(name);
  try {
    parse_values(args);
  } catch (const OptionError& e) {
    base::error("%s", e.what());
    return 2;
  }
  if (o.pid <= 0 && o.command.empty() && !args.given.count("--cgroup")) {
    base::error("%s needs a target: -p PID, --cgroup=PATH or -- CMD [ARGS...]", command);
    return 2;
  }
  try {
    const unsigned defaults = default_kernel_groups(!o.select.empty() || !o.usdt.empty());
    o.kernel_groups = args.no_kernel        ? 0
                      : args.kernel.empty() ? defaults
                                            : parse_kernel_groups(args.kernel, defaults);
  } catch (const std::invalid_argument& e) {
    base::error("--kernel: %s", e.what());
    return 2;
  }
  o.filter.mode = parse_filter_mode(args.filter).value_or(FilterMode::Absolute);
  // --filter=off keeps every probe, unless a budget is asked for.
  if (o.filter.mode == FilterMode::Off && args.filter_budget.empty()) o.filter.budget_pct = 0;
  o.atrace_command_line = invocation();
  return 0;
}

int run_recording(const RecordOptions& o, StopSignals& stop, EventSink* sink) {
  try {
    RecordResult r = record(o, stop, sink);
    if (!r.write_error.empty()) return 1;  // already said, when it happened
    // Each buffer has its own size option (the fast path's ring too).
    if (r.lost)
      base::warning("%llu events lost (%s)%s", static_cast<unsigned long long>(r.lost),
                    r.lost_by_kind.c_str(),
                    r.lost_hint.empty() ? "" : (": try " + r.lost_hint).c_str());
    if (!o.output.empty()) {
      const char* where = o.output == "-" ? "stdout" : o.output.c_str();
      if (r.probes && !r.hits)  // said on the last line, where it is read (issue 31)
        base::progress("%llu events written to %s: 0 calls, %s",
                       static_cast<unsigned long long>(r.events), where,
                       r.probes == 1
                           ? "the probe never fired"
                           : ("none of the " + std::to_string(r.probes) + " probes fired").c_str());
      else if (r.probes)
        base::progress("%llu events from %zu probes written to %s",
                       static_cast<unsigned long long>(r.events), r.probes, where);
      else if (o.select.empty() && o.usdt.empty())
        // Said, not left for the report to find out (issue 31).
        base::progress(
            "%llu kernel events written to %s: kernel events only, no function "
            "was selected (--select=PATTERN records calls; 'atrace list PROGRAM' shows "
            "the functions)",
            static_cast<unsigned long long>(r.events), where);
      else
        base::progress("%llu kernel events written to %s",
                       static_cast<unsigned long long>(r.events), where);
    }
    return r.exit_status;
  } catch (const RecordInterrupted& e) {
    base::error("%s", e.what());
    return 128 + e.signal;
  } catch (const std::exception& e) {  // RecordError, or any other: one line
    base::error("%s", e.what());
    return 1;
  }
}

}  // namespace atrace::tools
