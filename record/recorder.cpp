#include "record/recorder.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "base/capabilities.h"
#include "base/clock.h"
#include "bpf/atrace.h"
#include "bpf/atrace.skel.h"
#include "formats/trace_writer.h"
#include "record/announce.h"
#include "record/async_writer.h"
#include "record/attach.h"
#include "record/bpf_session.h"
#include "record/bpf_variants.h"
#include "record/drain_loop.h"
#include "record/event_sink.h"
#include "record/exclude_list.h"
#include "record/exec_follow.h"
#include "record/features.h"
#include "record/late_arrivals.h"
#include "record/module_watch.h"
#include "record/output_file.h"
#include "record/record_decoder.h"
#include "record/record_plan.h"
#include "record/relevance.h"
#include "record/reorder.h"
#include "record/stack_joiner.h"
#include "record/status_line.h"
#include "record/stop_signals.h"
#include "record/target.h"
#include "record/thread_table.h"
#include "record/unwind_guard.h"
#include "record/usdt_attach.h"
#include "uprobes/elf_symbols.h"
#include "uprobes/proc_maps.h"
#include "uprobes/selector.h"

namespace atrace {

namespace {

constexpr uint64_t kReorderWindowNs = 20'000'000;  // see reorder.h

bool g_verbose = false;
int libbpf_print(enum libbpf_print_level level, const char* fmt, va_list args) {
  if (!g_verbose && level != LIBBPF_WARN) return 0;
  if (!g_verbose) return 0;  // libbpf's own warnings become our one-line errors
  return vfprintf(stderr, fmt, args);
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& a : v) s += (s.empty() ? "" : " ") + a;
  return s;
}

// Runs the parts (record_plan.h, bpf_session.h, record_decoder.h,
// drain_loop.h) in order, and owns what lives for the whole recording.
class Recorder {
 public:
  Recorder(const RecordOptions& o, StopSignals& stop, EventSink* sink)
      : opts_(o), stop_(stop), sink_(sink), status_(!sink) {}
  RecordResult run();

 private:
  void check_request();
  bool use_multi() const;  // throws when --attach=multi cannot be had
  void load_unwind_guard();
  void attach_unwind_guard(pid_t pid);
  void set_filter_state(const FilterCosts& costs);
  std::vector<formats::ProbeInfo> attach_probes(pid_t pid, const FilterCosts& costs);
  std::vector<formats::ProbeInfo> attach_functions();
  void attach_usdt(std::vector<formats::ProbeInfo>& table);
  void on_record(const void* data, size_t size);
  bool on_wake(uint64_t now, size_t nprobes, uint64_t start);
  void deliver(std::vector<formats::Event>&& events);
  void stop_if_signalled() const;
  bool plan_or_follow();
  ExecMatch follow_exec(std::unique_ptr<Target>& target, std::unique_ptr<ExecFollower>& follower);

  const RecordOptions& opts_;
  StopSignals& stop_;
  EventSink* sink_;  // may be null; the events go to it too
  KernelFeatures features_;
  bool multi_ = false;  // function probes on uprobe_multi links
  RecordPlan plan_;
  RecordDecoder decoder_;
  std::unique_ptr<BpfSession> bpf_;
  // A run that fails before the header leaves no file (output_file.h).
  // Neither when there is no output (a sink alone).
  std::unique_ptr<OutputFile> output_;
  std::unique_ptr<formats::TraceWriter> writer_;
  std::unique_ptr<AsyncEventWriter> async_;  // writer_'s events, while recording
  // Before the filters, which take functions out of them.
  std::unique_ptr<FunctionProbes> probes_;
  std::unique_ptr<UsdtProbes> usdt_;
  ThreadTable threads_;
  std::unique_ptr<RelevanceRun> relevance_;
  Reorderer reorder_;
  StatusLine status_;
  uint64_t events_ = 0;
  // Values and stack records whose event had already left the reorder
  // window.
  uint64_t values_late_ = 0, stacks_late_ = 0;
  uint64_t last_event_ts_ = 0;
  std::unique_ptr<UnwindGuard> unwind_guard_;
  std::vector<uprobes::UnwindPoint> unwind_points_;
  LateArrivals late_;                   // modules waited for: did they arrive?
  std::vector<WatchedModule> watched_;  // module_watch.h: MODULE events' files
  std::unique_ptr<ModuleWatch> module_watch_;
  bool started_ = false;  // a launched command ran before the recording (exec_follow.h)
};

// What needs no target and no kernel object: a request that cannot be
// recorded fails here.
void Recorder::check_request() {
  // Kernel events alone are a recording too (like perf trace); nothing at
  // all is not.
  if (opts_.select.empty() && opts_.usdt.empty() && !opts_.kernel_groups)
    throw RecordError(
        "nothing to record: give --select=PATTERNS or --usdt=SPECS, or drop --no-kernel");
  // A bad -o first, before any work; none at all only when a sink takes
  // the events.
  if (!opts_.output.empty() || !sink_) check_output_path(opts_.output);
  if (auto denied = tracing_privilege_error("record"); !denied.empty()) throw RecordError(denied);
  features_ = detect_kernel_features();
  if (auto missing = features_.missing_requirement(); !missing.empty()) throw RecordError(missing);
  if (opts_.verbose) print_kernel_features(stderr, features_);
}

bool Recorder::use_multi() const {
  if (opts_.attach_mode == AttachMode::Multi && !features_.uprobe_multi)
    throw RecordError("kernel " + features_.release + " has no uprobe_multi links (Linux 6.6+)");
  return opts_.attach_mode == AttachMode::Multi ||
         (opts_.attach_mode == AttachMode::Auto && features_.uprobe_multi);
}

// Return probes made exception-safe (record/unwind_guard.h), loaded
// before the target is touched. Where the kernel cannot run the guard, a
// program with a C++ unwinder is refused; any other is traced with a
// warning (only pthread_exit and cancellation unwind it).
void Recorder::load_unwind_guard() {
  unwind_points_ = uprobes::find_unwind_points(plan_.modules);
  try {
    UnwindGuardMaps maps;
    maps.rings = bpf_->fd_of_rings_map();
    maps.lost = bpf_->fd_of_lost();
    maps.traced_tgids = bpf_->fd_of_traced_tgids();
    maps.thread_lost = bpf_->fd_of_thread_lost();
    maps.lossy_threads = bpf_->fd_of_lossy_threads();
    unwind_guard_ = std::make_unique<UnwindGuard>(maps, plan_.sites, multi_);
  } catch (const UnwindGuardError& e) {
    for (const auto& p : unwind_points_)
      for (const auto& m : plan_.modules)
        if (p.path == m.path && p.role == uprobes::UnwindRole::Start)
          throw RecordError(std::string(e.what()) +
                            ": a C++ exception through a traced function of " + m.name +
                            " would abort it");
    std::fprintf(stderr,
                 "atrace: warning: return probes are not exception-safe here (%s): a thread "
                 "that calls pthread_exit or is cancelled inside a traced function will crash\n",
                 e.what());
  }
}

// Before any return probe and before atrace's thread-exit program.
void Recorder::attach_unwind_guard(pid_t pid) {
  if (unwind_guard_) unwind_guard_->attach(unwind_points_, pid);
}

// Each function's filter state is set before any probe fires: the
// programs turn functions off on their own (max-calls, threshold), never
// a kept one, and judge a mean net of the probes of the calls it made
// against the threshold plus its path's share of the probe cost
// (absolute_limit_ns).
void Recorder::set_filter_state(const FilterCosts& costs) {
  for (const auto& site : plan_.sites) {
    atrace_fn_state st{};
    const auto path = static_cast<size_t>(site.entry_path);
    st.keep =
        std::find(plan_.keep_ids.begin(), plan_.keep_ids.end(), site.id) != plan_.keep_ids.end();
    if (opts_.filter.mode == FilterMode::Absolute) {
      const uint64_t floor = costs.floor_ns[path % costs.floor_ns.size()];
      st.limit_ns = absolute_limit_ns(opts_.filter.threshold_ns, floor);
      st.early_limit_ns = early_limit_ns(opts_.filter.threshold_ns, floor);
    }
    // What the programs take off the callers' measured durations when
    // this function returns (its probes ran inside them).
    st.cost_ns = costs.cost_ns[path % costs.cost_ns.size()];
    bpf_map_update_elem(bpf_->fd_of_fn_state(), &site.id, &st, BPF_ANY);
  }
}

std::vector<formats::ProbeInfo> Recorder::attach_functions() {
  // Sites the kernel would refuse are reported, not attached: in launch mode
  // the kernel's refusal would be silent (uprobes/insn_class.h).
  std::vector<uprobes::ProbeSite> attachable;
  std::vector<const uprobes::ProbeSite*> refused;
  for (const auto& s : plan_.sites) {
    if (s.entry_path == formats::ProbePath::Refused) refused.push_back(&s);
    else attachable.push_back(s);
  }
  if (!refused.empty())
    std::fprintf(stderr,
                 "atrace: warning: %zu function(s) start with an instruction the kernel cannot "
                 "probe and are not traced (first: %s in %s)\n",
                 refused.size(), refused.front()->name.c_str(), refused.front()->module.c_str());
  if (attachable.empty())
    throw RecordError("no selected function can be probed: " + refused.front()->name +
                      " starts with an instruction the kernel refuses to probe");
  auto failures = probes_->attach(attachable);
  std::map<uint32_t, const AttachFailure*> failed;
  for (const auto& f : failures) failed[f.site->id] = &f;
  std::vector<formats::ProbeInfo> table;
  for (const auto& s : attachable)
    if (!failed.count(s.id)) table.push_back(probe_info(s));
  if (failures.empty()) return table;
  const AttachFailure& first = failures.front();
  std::string what = first.site->name + " in " + first.site->module + ": " + first.reason;
  if (table.empty()) {
    if (first.error == EPERM || first.error == EACCES)
      throw RecordError("permission denied attaching uprobes (" + what + ")" +
                        (multi_ ? "" : task_uprobe_privilege_hint(first.error)));
    throw RecordError("no probe could be attached (" + what + ")");
  }
  std::fprintf(stderr, "atrace: warning: %zu of %zu functions could not be probed (first: %s)\n",
               failures.size(), attachable.size(), what.c_str());
  return table;
}

void Recorder::attach_usdt(std::vector<formats::ProbeInfo>& table) {
  auto failures = usdt_->attach(plan_.usdt);
  if (usdt_->attached().empty()) {
    if (table.empty())
      throw RecordError("no USDT probe could be attached (" + failures.front() + ")");
  } else if (!failures.empty()) {
    std::fprintf(stderr,
                 "atrace: warning: %zu of %zu USDT probes could not be attached (first: %s)\n",
                 failures.size(), plan_.usdt.size(), failures.front().c_str());
  }
  std::map<uint32_t, const uprobes::UsdtTarget*> by_id;
  for (const auto& t : plan_.usdt) by_id[t.id] = &t;
  for (uint32_t id : usdt_->attached()) table.push_back(probe_info(*by_id.at(id)));
}

// The probes, the filters' state first, then the filters: returns the
// probe table.
std::vector<formats::ProbeInfo> Recorder::attach_probes(pid_t pid, const FilterCosts& costs) {
  // Followed children need the probes in every process that maps the
  // module; the programs then keep only traced processes' hits.
  const pid_t where = opts_.follow_forks ? -1 : pid;
  atrace_bpf* skel = bpf_->skel();
  probes_ = std::make_unique<FunctionProbes>(skel->progs.func_entry, skel->progs.func_exit, where,
                                             multi_);
  probes_->set_value_programs(bpf_->values_entry_program(), bpf_->values_exit_program());
  probes_->set_stack_program(bpf_->stack_entry_program());
  if (opts_.filter.active()) set_filter_state(costs);
  std::vector<formats::ProbeInfo> table;
  const uint64_t attach_start = now_ns(CLOCK_MONOTONIC);
  if (!plan_.sites.empty()) table = attach_functions();
  usdt_ = std::make_unique<UsdtProbes>(skel->progs.usdt_hit, usdt_string_program(skel, features_),
                                       where, bpf_->usdt_specs());
  if (!plan_.usdt.empty()) attach_usdt(table);
  module_watch_ = std::make_unique<ModuleWatch>(skel->progs.module_hook, watched_, where);
  if (module_watch_->unwatched() && opts_.verbose)
    std::fprintf(stderr, "atrace: %zu module(s) without DT_INIT/DT_FINI: no MODULE events\n",
                 module_watch_->unwatched());
  if (!table.empty())
    announce_probes(table, now_ns(CLOCK_MONOTONIC) - attach_start, multi_, opts_.kernel_groups);
  // The filters judge functions only: USDT probes are the program's own
  // choice of what matters.
  std::vector<formats::ProbeInfo> functions;
  for (const auto& p : table)
    if (p.kind == formats::ProbeKind::Function) functions.push_back(p);
  if (opts_.filter.active() && !functions.empty()) {
    try {
      relevance_ = std::make_unique<RelevanceRun>(
          opts_.filter, *probes_, bpf_->fd_of_fn_state(), bpf_->fd_of_fn_stat(), bpf_->ncpus(), pid,
          functions, plan_.keep_ids, costs.floor_ns, costs.cost_ns);
    } catch (const std::exception& e) {
      // Kept: the prefix tells the user which part of the recording failed.
      throw RecordError(std::string("relevance filters: ") + e.what());
    }
  }
  return table;
}

void Recorder::on_record(const void* data, size_t size) {
  DecodedRecord r = decoder_.decode(data, size);
  if (r.type == DecodedRecord::Type::FilterHint && relevance_) relevance_->hint();
  if (r.type == DecodedRecord::Type::Values && !join_values(reorder_, std::move(r.event)))
    ++values_late_;
  if (r.type == DecodedRecord::Type::Stack && !join_stack(reorder_, std::move(r.event)))
    ++stacks_late_;
  if (r.type != DecodedRecord::Type::Event) return;
  if (r.names_thread) threads_.named(r.event, r.thread_name);
  else threads_.saw(r.event);
  last_event_ts_ = std::max(last_event_ts_, r.event.ts);
  late_.saw(r.event);
  reorder_.push(std::move(r.event));
  ++events_;
}

// Events leave the reorder window to the sink and to the file (through
// the writing thread while recording).
void Recorder::deliver(std::vector<formats::Event>&& events) {
  if (sink_ && !events.empty()) sink_->events(events);
  if (async_) async_->write_events(std::move(events));
  else if (writer_) writer_->write_events(events);
}

// Every wake-up of the drain loop: the filters' decisions, then what the
// rings hold, written once it is older than the reorder window. True when
// the sink ends the recording.
bool Recorder::on_wake(uint64_t now, size_t nprobes, uint64_t start) {
  if (relevance_) {
    bpf_->drain();  // hints first, then the decisions
    for (auto& ev : relevance_->tick(now)) reorder_.push(std::move(ev));
  }
  bpf_->drain();
  // Called even with nothing to write: the writer flushes blocks by age.
  deliver(reorder_.take_until(now > kReorderWindowNs ? now - kReorderWindowNs : 0));
  // The loss counters cost a map read per kind: only for a visible line.
  if (status_.enabled())
    status_.show(nprobes, events_, bpf_->read_lost().total(),
                 static_cast<double>(now - start) / 1e9);
  return sink_ && sink_->tick(now);
}

// Before the target is released, a stop signal ends the run (stop_signals.h).
void Recorder::stop_if_signalled() const {
  const int sig = stop_.take();
  if (!sig) return;
  std::string what = std::string("interrupted by ") + stop_signal_name(sig) +
                     " before the recording started: nothing recorded";
  if (opts_.pid <= 0 && !started_) what += ", " + opts_.command.at(0) + " not started";
  throw RecordInterrupted(sig, what);
}

// The plan from the command's own program; false when launch mode must
// follow the command through exec to a program the selectors match: its
// program is a script, or (with --follow-forks, whose children may run
// anything) an ELF program that matches nothing. An ELF program that
// matches nothing without --follow-forks is refused before it runs.
bool Recorder::plan_or_follow() {
  try {
    plan_ = plan_recording(opts_, features_);
    return true;
  } catch (const uprobes::NotElfError&) {
    if (opts_.pid > 0) throw;
  } catch (const uprobes::NoMatchError&) {
    if (opts_.pid > 0 || !opts_.follow_forks) throw;
  }
  return false;
}

// Runs the command until a program it execs matches the selectors, and
// holds it there (exec_follow.h); the plan is then that program's.
ExecMatch Recorder::follow_exec(std::unique_ptr<Target>& target,
                                std::unique_ptr<ExecFollower>& follower) {
  stop_if_signalled();
  target = std::make_unique<Target>(
      Target::launch_held(uprobes::find_executable(opts_.command.at(0)), opts_.command,
                          opts_.output == "-", stop_.inherited_ignored(), true));
  follower = std::make_unique<ExecFollower>(target->pid(), opts_.follow_forks);
  target->release();
  started_ = true;
  auto matches = [this](const ExecMatch& execd) {
    try {
      plan_ = plan_recording(opts_, features_, &execd);
      return true;
    } catch (const uprobes::NoMatchError&) {
      return false;
    } catch (const uprobes::NotElfError&) {
      return false;
    } catch (const uprobes::ElfError&) {
      return false;  // a stripped program (/bin/sh) has nothing to match
    }
  };
  const std::optional<ExecMatch> match = follower->run(matches, stop_);
  std::string ran;
  for (const auto& exe : follower->ran())
    if (!match || exe != match->exe) ran += (ran.empty() ? "" : ", ") + exe;
  if (match) {
    std::fprintf(stderr, "atrace: tracing %s, exec'd by the command (pid %d)%s%s\n",
                 match->exe.c_str(), match->pid, ran.empty() ? "" : " after ", ran.c_str());
    return *match;
  }
  if (const int sig = follower->interrupted()) {
    follower.reset();  // every followed process goes on, and gets the signal
    kill(target->pid(), sig);
    throw RecordInterrupted(sig, std::string("interrupted by ") + stop_signal_name(sig) +
                                     " before the recording started: nothing recorded");
  }
  if (auto status = follower->top_status()) target->reaped(*status);
  const std::string what = !opts_.select.empty() ? "no function matched '" + opts_.select + "'"
                                                 : "no USDT probe matched '" + opts_.usdt + "'";
  throw RecordError(what + " in anything the command ran: " + ran);
}

RecordResult Recorder::run() {
  g_verbose = opts_.verbose;
  libbpf_set_print(libbpf_print);
  check_request();
  // Everything that can fail on the user's input fails before the target
  // is touched, unless the command must be followed to its program.
  std::unique_ptr<Target> target;
  // Released (every followed process let go) before the target is waited for.
  std::unique_ptr<ExecFollower> follower;
  std::optional<ExecMatch> followed;
  if (!plan_or_follow()) followed = follow_exec(target, follower);
  watched_ = watched_modules(plan_.sites, plan_.usdt);
  decoder_ = RecordDecoder(plan_.usdt, watched_, plan_.values);
  late_ = LateArrivals(plan_.modules, plan_.sites, plan_.usdt);
  stop_if_signalled();
  // A reader that goes away (record -o - | head) is a write error, not a kill.
  signal(SIGPIPE, SIG_IGN);
  if (opts_.pid > 0) target = std::make_unique<Target>(Target::attach(opts_.pid));
  if (!opts_.output.empty()) {
    output_ = std::make_unique<OutputFile>(opts_.output);
    writer_ = std::make_unique<formats::TraceWriter>(output_->dup_fd(), output_->display());
  }
  multi_ = use_multi();
  BpfSettings bs;
  bs.buffer_bytes = opts_.buffer_bytes;
  bs.kernel_groups = opts_.kernel_groups;
  bs.follow_forks = opts_.follow_forks;
  bs.launch = opts_.pid <= 0;
  bs.multi = multi_;
  bs.filter = opts_.filter;
  bs.max_id = plan_.max_id;
  bs.values = plan_.values;
  bs.stacks = std::any_of(plan_.sites.begin(), plan_.sites.end(),
                          [](const uprobes::ProbeSite& s) { return s.with_stack; });
  bs.stack_depth = opts_.stack_depth;
  bs.verbose = opts_.verbose;
  bpf_ = std::make_unique<BpfSession>(bs, features_);
  // Calibrated before the rings hand anything to the recording: what a
  // probe hit costs here, stored in the header for `report --compensate`
  // and used by the filters.
  const ProbeCost cost = bpf_->calibrate();
  bpf_->start([this](const void* d, size_t n) { on_record(d, n); });
  if (!plan_.sites.empty()) load_unwind_guard();

  stop_if_signalled();

  if (!target) {
    bpf_->before_exec();
    target = std::make_unique<Target>(Target::launch_held(
        plan_.exe_path, opts_.command, opts_.output == "-", stop_.inherited_ignored()));
  }
  const pid_t pid = target->pid();
  // A followed command's processes are all alive and held (the first may
  // have ended, and would never leave the map).
  if (!follower) bpf_->trace(pid);
  else
    for (pid_t p : follower->processes()) bpf_->trace(p);
  attach_unwind_guard(opts_.follow_forks ? -1 : pid);
  bpf_->attach_tracepoints();

  // Built before the probes go in: from there to the target's release,
  // as little as possible happens (a stop signal ends the run until then).
  formats::TraceHeader header =
      trace_header(opts_, features_, cost, pid,
                   target->launched() ? join(opts_.command) : target->command_line());
  const std::vector<formats::ProbeInfo> table = attach_probes(pid, filter_costs(cost.table()));

  header.start_mono_ns = now_ns(CLOCK_MONOTONIC);
  header.start_real_ns = now_ns(CLOCK_REALTIME);
  // An attached process's modules were mapped before: their MODULE events
  // say so at the start (a launched one's come from its exec).
  if (!target->launched())
    for (auto& ev : modules_mapped_now(watched_, pid, header.start_mono_ns))
      reorder_.push(std::move(ev));
  // A followed command's exec happened just before: the program has run
  // none of its instructions yet.
  if (followed) {
    formats::Event ev;
    ev.kind = formats::EventKind::ProcExec;
    ev.ts = header.start_mono_ns;
    ev.pid = ev.tid = static_cast<uint32_t>(followed->pid);
    ev.text = followed->exe;
    reorder_.push(std::move(ev));
  }
  // The last moment a launched target can be left unstarted. An attached
  // one is traced from its first probe on: a signal from here on stops the
  // recording at the drain loop's first look and keeps what was recorded.
  if (target->launched()) {
    stop_if_signalled();
    target->release();
    if (follower) follower->release();
  }
  RecordResult r;
  // A write error (disk full, reader gone) stops the recording at once and
  // is said at once; the teardown below then writes nothing more.
  auto writing = [&](const auto& write) {
    if (!r.write_error.empty()) return;
    try {
      write();
    } catch (const formats::WriteError& e) {
      r.write_error = e.what();
      std::fprintf(stderr, "atrace: %s: recording stopped\n", e.what());
    }
  };
  if (writer_) {
    // On the writing thread, so that the drain loop starts now: a write
    // held up by the disk must not keep it from the buffers.
    async_ = std::make_unique<AsyncEventWriter>(*writer_);
    async_->run([this, header, table] {
      writer_->write_header(header);
      writer_->write_probes(table);
      output_->commit();
    });
  }
  if (sink_) sink_->begin(header, table);
  writing([&] {
    DrainLoop loop;
    loop.rings_fd = bpf_->rings_fd();
    loop.target_fd = target->pidfd();
    loop.stop = &stop_;
    loop.period_ns = bpf_->drain_period_ns();
    if (opts_.duration_s > 0)
      loop.deadline_ns = header.start_mono_ns + static_cast<uint64_t>(opts_.duration_s * 1e9);
    loop.follow_forks = opts_.follow_forks;
    loop.processes_left = [this] { return bpf_->processes_left(); };
    loop.on_wake = [&](uint64_t now) { return on_wake(now, table.size(), header.start_mono_ns); };
    run_until_stop(loop);
    status_.clear();
  });

  // The recording ends now: no call starts from here on, and the calls in
  // flight that return while the probes are being detached still close
  // (bpf/atrace.bpf.c, stop_gate); detaching takes a grace period or two.
  bpf_->stopping();
  header.end_mono_ns = now_ns(CLOCK_MONOTONIC);
  header.end_real_ns = now_ns(CLOCK_REALTIME);
  std::vector<formats::ProbeInfo> detached;
  if (relevance_) {
    relevance_->finish();
    detached = relevance_->detached();
    if (auto line = relevance_->summary(); !line.empty())
      std::fprintf(stderr, "atrace: %s\n", line.c_str());
  }
  // Stop: returns, then entries (attach.h), then everything in flight.
  const uint64_t detach_start = now_ns(CLOCK_MONOTONIC);
  probes_->detach_all();
  relevance_.reset();  // its closes return once every probe is gone (detacher.h)
  usdt_->detach_all();
  module_watch_.reset();
  if (opts_.verbose && !table.empty())
    std::fprintf(stderr, "atrace: detached %zu probes in %.1f ms\n", table.size(),
                 static_cast<double>(now_ns(CLOCK_MONOTONIC) - detach_start) / 1e6);
  if (!target->exited()) threads_.refresh_names();
  bpf_->drain();
  auto rest = reorder_.take_all();
  if (!rest.empty()) writing([&] { deliver(std::move(rest)); });
  // Exits of calls in flight at the stop come after it.
  header.end_mono_ns = std::max(header.end_mono_ns, last_event_ts_);

  formats::LostCounts lost = bpf_->read_lost(&r.lost_by_kind);
  if (writer_) {
    writing([&] {
      if (async_) async_->flush();
      async_.reset();
      writer_->finish(header, threads_.table(), lost);
    });
    // After a write error the disk or pipe is gone: one message said so.
    if (r.write_error.empty())
      write_exclude_list(detached, opts_.output, plan_.exe_path, opts_.pid);
  }
  if (sink_) sink_->end(header, threads_.table(), lost);

  for (const auto& line : late_.never_seen()) std::fprintf(stderr, "atrace: %s\n", line.c_str());
  if (values_late_)
    std::fprintf(stderr,
                 "atrace: warning: the arguments or return values of %llu call(s) arrived after "
                 "the call was written, and are missing\n",
                 static_cast<unsigned long long>(values_late_));
  if (stacks_late_)
    std::fprintf(stderr,
                 "atrace: warning: the call stacks of %llu call(s) arrived after the call was "
                 "written, and are missing\n",
                 static_cast<unsigned long long>(stacks_late_));

  r.events = events_;
  r.lost = lost.total();
  r.probes = table.size();
  // Nothing of atrace's stays in the kernel while a launched target is
  // waited for.
  unwind_guard_.reset();
  bpf_.reset();
  // A launched target is left to finish (stop signals are passed on to
  // it), then its status is passed on.
  r.exit_status = wait_passing_signals(*target, stop_);
  return r;
}

}  // namespace

RecordResult record(const RecordOptions& opts, StopSignals& stop, EventSink* sink) {
  return Recorder(opts, stop, sink).run();
}

}  // namespace atrace
