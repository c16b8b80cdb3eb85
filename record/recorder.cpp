#include "record/recorder.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <thread>

#include "base/capabilities.h"
#include "base/clock.h"
#include "base/diagnostics.h"
#include "base/plural.h"
#include "bpf/atrace.h"
#include "fastpath/inject/stopped_process.h"
#include "fastpath/trampoline.h"
#include "formats/trace_writer.h"
#include "record/announce.h"
#include "record/async_writer.h"
#include "record/attach.h"
#include "record/bpf_session.h"
#include "record/calibrate_cache.h"
#include "record/cgroup_target.h"
#include "record/clock_evidence.h"
#include "record/drain_loop.h"
#include "record/entry_stop.h"
#include "record/event_collector.h"
#include "record/event_sink.h"
#include "record/exclude_list.h"
#include "record/exec_follow.h"
#include "record/fast_path.h"
#include "record/fast_paths.h"
#include "record/features.h"
#include "record/kill_bound.h"
#include "record/link_reaper.h"
#include "record/module_watch.h"
#include "record/output_file.h"
#include "record/phase_times.h"
#include "record/record_plan.h"
#include "record/relevance.h"
#include "record/reorder.h"
#include "record/rotation.h"
#include "record/status_line.h"
#include "record/stop_signals.h"
#include "record/target.h"
#include "record/unwind_guard.h"
#include "record/usdt_attach.h"
#include "uprobes/elf_symbols.h"
#include "uprobes/proc_maps.h"
#include "uprobes/process_root.h"
#include "uprobes/selector.h"
#include "uprobes/unwind_points.h"

namespace atrace {

namespace {

// True when process `pid` has exited: no such process, or a zombie (a
// container's init waits for its parent there).
bool process_gone(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return true;
  const size_t paren = line.rfind(')');  // the name may hold spaces and parens
  if (paren == std::string::npos || paren + 2 >= line.size()) return true;
  return line[paren + 2] == 'Z' || line[paren + 2] == 'X';
}

bool g_verbose = false;
// With -v, libbpf's warnings and notes (a refused program's verifier log
// is a warning); its debug lines (2,000 a load: every relocation) only
// with ATRACE_LIBBPF_DEBUG=1, as they would bury the phases.
int libbpf_print(enum libbpf_print_level level, const char* fmt, va_list args) {
  if (!g_verbose) return 0;  // libbpf's own warnings become our one-line errors
  static const bool debug = [] {
    const char* e = std::getenv("ATRACE_LIBBPF_DEBUG");
    return e && *e == '1';
  }();
  if (level == LIBBPF_DEBUG && !debug) return 0;
  return vfprintf(stderr, fmt, args);
}

std::string join(const std::vector<std::string>& v, const char* sep = " ") {
  std::string s;
  for (const auto& a : v) s += (s.empty() ? "" : sep) + a;
  return s;
}

// A recording is a short list of stages (run()), each a function with a
// phase of its own, timed for `record -v` (phase_times.h):
//
//   check_request  features   what needs no target: the request, the kernel
//   plan           plan       the probe sites; a command followed to its program
//   load           load+verify  the output file, the BPF programs it uses,
//                              the unwind guard's
//   probe_cost     calibration  the probe cost, cached per boot (calibrate_cache.h)
//   start          attach     the target, the tracepoints, the probes, the header
//   record_events  (first event)  the drain loop until the end
//   detach         detach     the probes go; what is in flight is drained
//   write_rest     write      the rest of the events and the trace's end
//   teardown       teardown   the BPF objects; the target is then waited for
//
// Each stage's state is its own: the request's (features_), the plan's
// (plan_, watched_), the output's, the probes' (Probes), the events'
// (EventCollector), the run's (Run).
class Recorder {
 public:
  Recorder(const RecordOptions& o, StopSignals& stop, EventSink* sink)
      : opts_(o), stop_(stop), sink_(sink), status_(!sink) {}
  RecordResult run();

 private:
  // The target and what the recording says about it, from start() on.
  struct Run {
    std::unique_ptr<Target> target;
    std::vector<Target> others;  // -p A,B,...: the processes after the first
    // Released (every followed process let go) before the target is waited for.
    std::unique_ptr<ExecFollower> follower;
    std::optional<ExecMatch> followed;
    formats::TraceHeader header;
    std::vector<formats::ProbeInfo> table;
    std::vector<formats::ProbeInfo> detached;  // by the filters
    uint64_t released_at = 0;                  // CLOCK_MONOTONIC
  };
  // --fast-path: an exec'd program's functions, its table rows written
  // once (patch_exec).
  struct ExecPlan {
    std::vector<uprobes::ProbeSite> sites;
    std::vector<uprobes::UnwindPoint> unwinders;
    std::set<uint32_t> fresh_ids;  // its functions no program had before
    bool in_table = false;
  };
  // Everything attached to the target, and the filters that take
  // functions out of it.
  struct Probes {
    std::unique_ptr<UnwindGuard> unwind_guard;
    std::vector<uprobes::UnwindPoint> unwind_points;
    std::unique_ptr<FunctionProbes> functions;  // before the filters
    std::unique_ptr<UsdtProbes> usdt;
    std::unique_ptr<ModuleWatch> modules;
    std::unique_ptr<RelevanceRun> relevance;
  };
  // The trace file; none when a sink alone takes the events. A run that
  // fails before the header leaves no file (output_file.h).
  struct Output {
    std::unique_ptr<OutputFile> file;
    std::unique_ptr<formats::TraceWriter> writer;
    std::unique_ptr<AsyncEventWriter> async;  // writer's events, while recording
    std::unique_ptr<Rotation> rotation;       // --rotate
  };

  // The stages, in order.
  void check_request();
  void plan();
  void load();
  ProbeCost probe_cost();
  void start(const ProbeCost& cost);
  void record_events(RecordResult& r);
  void detach();
  void write_rest(RecordResult& r);
  void teardown(RecordResult& r);

  // Parts of the stages.
  bool use_multi() const;  // throws when --attach=multi cannot be had
  bool plan_or_follow();
  ExecMatch follow_exec(bool planned);
  bool fast_launch() const;
  BpfSettings bpf_settings(bool calibrating) const;
  void load_unwind_guard(const SharedMapFds& shared);
  void set_filter_state(const FilterCosts& costs);
  std::vector<formats::ProbeInfo> attach_probes(pid_t pid, const FilterCosts& costs);
  std::vector<formats::ProbeInfo> attach_functions();
  std::vector<formats::ProbeInfo> install_fast_path(const std::vector<uprobes::ProbeSite>& sites,
                                                    pid_t pid,
                                                    fastpath::StoppedProcess* held = nullptr);
  void install_at_entry();
  void drain_fast_path();
  void drain_fast_path_rest();
  uint64_t release_edge(uint64_t now) const;
  void finish_fast_path();
  void install_hot(pid_t pid, fastpath::StoppedProcess* held = nullptr);
  bool hot_limits_off(uint32_t id) const;
  void set_limits(const uprobes::ProbeSite& site, atrace_fn_state& st) const;
  void restore_limits();
  void attach_usdt(std::vector<formats::ProbeInfo>& table);
  void push_start_events();
  bool on_wake(uint64_t now);
  void deliver(std::vector<formats::Event>&& events);
  void rotate_if_due(uint64_t now, uint64_t edge);
  void writing(RecordResult& r, const std::function<void()>& write);
  void stop_if_signalled() const;
  void attach_targets();
  void begin_tracing(pid_t pid);
  void became_traced(pid_t pid);
  void note_joined();
  bool follows_tree() const;
  void follow_tree();
  bool on_exec(const ExecMatch& m);
  bool patch_exec(const ExecMatch& m);
  void same_functions_as_before(ExecPlan& plan);
  void add_probe_rows(std::vector<formats::ProbeInfo> rows);
  void release_tree();
  void forget_gone();

  // A copy: --cgroup's processes are filled in (check_request).
  RecordOptions opts_;
  StopSignals& stop_;
  EventSink* sink_;  // may be null; the events go to it too
  PhaseTimes phases_;
  // check_request
  KernelFeatures features_;
  bool multi_ = false;                  // function probes on uprobe_multi links
  std::optional<CgroupTarget> cgroup_;  // --cgroup
  // Several processes traced (-p A,B, --cgroup, --follow-forks): probes in
  // every process that maps a file, the programs keeping the traced ones'.
  bool several_ = false;
  // plan
  RecordPlan plan_;
  std::vector<WatchedModule> watched_;  // module_watch.h: MODULE events' files
  bool started_ = false;  // a launched command ran before the recording (exec_follow.h)
  // load
  Output out_;
  std::unique_ptr<BpfSession> bpf_;
  std::optional<ProbeCost> cached_cost_;  // found before the load: no calibration
  CalibrationKey cost_key_;
  // start
  Run run_;
  // --fast-path, once installed. Destroyed after the probes: hot mode's
  // unwinders keep their trampolines while the unwind guard probes those.
  std::unique_ptr<FastPath> fast_;
  // Every install: fast_, and with --follow-forks each program exec'd
  // since (patch_exec). Made with fast_, destroyed before it.
  std::unique_ptr<FastPaths> fast_all_;
  Probes probes_;
  // Every process that became traced (became_traced).
  std::set<pid_t> traced_;
  // --follow-forks (follow_tree): the programs whose selectors were
  // resolved (by file identity), the functions probed (file identity and
  // offset), and the next function id.
  std::set<uprobes::FileId> planned_programs_;
  ResolvedModules resolved_modules_;
  std::set<std::pair<uprobes::FileId, uint64_t>> probed_places_;
  std::map<uprobes::FileId, ExecPlan> exec_plans_;  // by program file
  uint64_t execs_patched_ = 0;                      // processes patched at an exec
  // Each function patched so far (file identity, offset): its id.
  std::map<std::pair<uprobes::FileId, uint64_t>, uint32_t> patched_places_;
  uint32_t next_id_ = 0;
  FilterCosts costs_;  // the filters' (attach_probes)
  // record_events
  std::unique_ptr<EventCollector> events_;
  // --fast-path in launch mode: the functions to patch once the program
  // reached its entry point (install_at_entry).
  std::vector<uprobes::ProbeSite> at_entry_;
  // A drain's events, kept between drains: millions of them a second on
  // the fast path, a fresh vector each time would fault its pages in anew.
  std::vector<formats::Event> fast_events_;
  StatusLine status_;
  ClockEvidence clocks_;  // the host's clocks, read every second (merge's evidence)
  // detach: holds atrace's links' closing off to a helper (link_reaper.h)
  LinkReaper reaper_;
};

RecordResult Recorder::run() {
  g_verbose = opts_.verbose;
  libbpf_set_print(libbpf_print);
  phases_.begin();
  check_request();
  phases_.end(phase::kFeatures);
  // One process (-p PID): lists and cgroups leave their gone ones out.
  const std::vector<pid_t> pids = traced_pids(opts_);
  const pid_t only = pids.size() == 1 && opts_.cgroup.empty() ? pids.front() : 0;
  // There at the start, a zombie too (exited, its pid not reusable yet).
  const bool existed = only > 0 && ::access(("/proc/" + std::to_string(only)).c_str(), F_OK) == 0;
  try {
    plan();
    phases_.end(phase::kPlan);
    load();
    phases_.end(phase::kLoad);
    const ProbeCost cost = probe_cost();
    phases_.end(phase::kCalibration, cached_cost_ ? "cached" : "measured");
    start(cost);
    phases_.end(phase::kAttach);
  } catch (...) {
    // --fast-path's launched command waits at its exec until its install;
    // a recording that fails (or is interrupted) before it ends the
    // command there: it never ran its own code (the hold pipe's rule).
    if (fast_launch() && run_.target && !fast_ && !run_.target->exited())
      kill(run_.target->pid(), SIGKILL);
    // A process that exits meanwhile takes its files with it (a
    // container's root goes with its last process): what failed to open
    // then is not what happened. What was attached closes on unwinding.
    if (existed && process_gone(only))
      throw TargetError("process " + std::to_string(only) +
                        " exited while atrace attached: nothing to record");
    throw;
  }
  RecordResult r;
  record_events(r);
  const uint64_t first = events_->first_event_at();
  phases_.add(phase::kFirstEvent, first > run_.released_at ? first - run_.released_at : 0,
              first ? "after the target's start" : "none");
  phases_.skip();  // the recording itself is no phase
  detach();
  phases_.end(phase::kDetach);
  write_rest(r);
  phases_.end(phase::kWrite);
  teardown(r);
  phases_.end(phase::kTeardown);
  if (opts_.verbose) phases_.print(stderr);
  // A launched target is left to finish (stop signals are passed on to
  // it), then its status is passed on.
  r.exit_status = wait_passing_signals(*run_.target, stop_);
  return r;
}

// What needs no target and no kernel object: a request that cannot be
// recorded fails here. The kernel's features are probed here, once.
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
  multi_ = use_multi();
  if (!opts_.cgroup.empty()) {
    cgroup_ = resolve_cgroup(opts_.cgroup);
    opts_.pids = cgroup_processes(*cgroup_);
    if (opts_.pids.empty())
      throw RecordError("--cgroup=" + opts_.cgroup + ": no process in " + cgroup_->path +
                        ": its processes' files are what --select is resolved against");
    opts_.pid = opts_.pids.front();
  }
  several_ = traced_pids(opts_).size() > 1 || cgroup_ || opts_.follow_forks;
  if (opts_.fast_path_hot && !opts_.filter.active())
    throw RecordError(
        "--fast-path=hot: needs a relevance filter (it patches what the filter would detach): "
        "not with --filter=off");
  if (opts_.fast_path_hot && opts_.follow_forks)
    throw RecordError(
        "--fast-path=hot: one process so far: not with --follow-forks (docs/fast-path.md)");
  // --follow-forks: the fork children get rings of their own (fast_path.cpp,
  // "Fork children"); a launched command's through atrace's follower, its
  // tracer the whole recording (fastpath/inject/tracer.h).
  if (opts_.fast_path && (traced_pids(opts_).size() > 1 || cgroup_))
    throw RecordError(
        "--fast-path: only for one process so far (-p PID or a launched command): not with "
        "several processes or --cgroup (docs/fast-path.md)");
  // Before any thread of atrace's starts: they inherit it (exec_follow.h).
  if (follows_tree()) block_child_signals();
}

// --follow-forks with a launched command: its processes stay followed
// through the recording (exec_follow.h), so that each program one of them
// execs gets its probes before it runs (on_exec). An attached process
// (-p, --cgroup) is not atrace's to follow: its children's programs are
// probed only where the files probed at the start are theirs too.
bool Recorder::follows_tree() const {
  return opts_.follow_forks && opts_.pid <= 0 && opts_.cgroup.empty();
}

bool Recorder::use_multi() const {
  if (opts_.attach_mode == AttachMode::Multi && !features_.uprobe_multi)
    throw RecordError("kernel " + features_.release + " has no uprobe_multi links (Linux 6.6+)");
  return opts_.attach_mode == AttachMode::Multi ||
         (opts_.attach_mode == AttachMode::Auto && features_.uprobe_multi);
}

// Everything that can fail on the user's input fails here, before the
// target is touched, unless the command must be followed to its program.
void Recorder::plan() {
  // --fast-path in launch mode takes the command's program just after its
  // exec, under ptrace, as a followed command's (install_at_entry).
  const bool planned = plan_or_follow();
  if (!planned || fast_launch()) run_.followed = follow_exec(planned);
  watched_ = watched_modules(plan_.sites, plan_.usdt, plan_.modules);
  events_ = std::make_unique<EventCollector>(
      plan_, watched_,
      opts_.select.empty() ? std::vector<uprobes::Selector>{}
                           : uprobes::parse_selectors_with_files(opts_.select));
  events_->on_hint = [this] {
    if (probes_.relevance) probes_.relevance->hint();
  };
  events_->on_thread_event = [this](const formats::Event& ev) {
    if (fast_all_) fast_all_->on_kernel_event(ev);
  };
}

// The plan from the command's own program; false when launch mode must
// follow the command through exec to a program the selectors match: its
// program is a script, or (with --follow-forks, whose children may run
// anything) an ELF program that matches nothing or has no symbols. An ELF program that
// matches nothing without --follow-forks is refused before it runs.
bool Recorder::plan_or_follow() {
  try {
    plan_ = plan_recording(opts_, features_);
    return true;
  } catch (const uprobes::NotElfError&) {
    if (opts_.pid > 0) throw;
  } catch (const uprobes::NoMatchError&) {
    if (opts_.pid > 0 || !opts_.follow_forks) throw;
  } catch (const uprobes::ElfError&) {
    // A stripped program (Debian's /bin/sh): nothing of its own to match.
    if (opts_.pid > 0 || !opts_.follow_forks) throw;
  }
  return false;
}

// --fast-path with a launched command (not -p).
bool Recorder::fast_launch() const { return opts_.fast_path && opts_.pid <= 0; }

// Runs the command until a program it execs matches the selectors, and
// holds it there (exec_follow.h); the plan is then that program's.
// `planned`: the command's own program is the plan already, its exec the
// match.
ExecMatch Recorder::follow_exec(bool planned) {
  stop_if_signalled();
  auto& target = run_.target;
  auto& follower = run_.follower;
  target = std::make_unique<Target>(
      Target::launch_held(uprobes::find_executable(opts_.command.at(0)), opts_.command,
                          opts_.output == "-", stop_.inherited_ignored(), true));
  follower = std::make_unique<ExecFollower>(target->pid(), opts_.follow_forks, fast_launch());
  target->release();
  started_ = true;
  // Why each ELF program the command ran did not match: the selector
  // that matched nothing there, not the whole list (issue 31).
  std::vector<std::string> why_not;
  auto matches = [this, &why_not, planned](const ExecMatch& execd) {
    if (planned) return true;
    try {
      plan_ = plan_recording(opts_, features_, &execd);
      return true;
    } catch (const uprobes::NoMatchError& e) {
      why_not.emplace_back(e.what());
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
  if (match && planned) return *match;
  if (match) {
    base::progress("tracing %s, exec'd by the command (pid %d)%s%s", match->exe.c_str(), match->pid,
                   ran.empty() ? "" : " after ", ran.c_str());
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
  if (why_not.empty()) throw RecordError(what + " in anything the command ran: " + ran);
  // Each program's own reason, once each.
  std::string reasons;
  for (size_t i = 0; i < why_not.size(); ++i)
    if (std::find(why_not.begin(), why_not.begin() + static_cast<std::ptrdiff_t>(i), why_not[i]) ==
        why_not.begin() + static_cast<std::ptrdiff_t>(i))
      reasons += (reasons.empty() ? "" : "; ") + why_not[i];
  throw RecordError("nothing the command ran (" + ran + ") matched the selectors: " + reasons);
}

// The output file, then the BPF programs: only those the plan uses (and
// the function programs for a calibration the cache cannot spare).
void Recorder::load() {
  stop_if_signalled();
  // A reader that goes away (record -o - | head) is a write error, not a kill.
  signal(SIGPIPE, SIG_IGN);
  if (opts_.pid > 0) attach_targets();
  if (!opts_.output.empty()) {
    out_.file = std::make_unique<OutputFile>(opts_.output);
    // Blocks flushed young enough for a kill to lose at most kill_bound.h's.
    formats::WriterOptions wo;
    wo.max_age_ns = kBlockMaxAgeNs;
    out_.writer =
        std::make_unique<formats::TraceWriter>(out_.file->dup_fd(), out_.file->display(), wo);
  }
  cost_key_ = CalibrationKey::current(multi_, bpf_programs_id());
  std::string why;
  cached_cost_ = load_cached_cost(kCalibrationCacheDir, cost_key_, &why);
  if (opts_.verbose && !cached_cost_)
    base::progress("probe cost not cached (%s): measured", why.c_str());
  // The unwind guard's programs are verified while atrace's are.
  BpfSession::Alongside guard;
  if (!plan_.sites.empty()) guard = [this](const SharedMapFds& maps) { load_unwind_guard(maps); };
  bpf_ = std::make_unique<BpfSession>(bpf_settings(!cached_cost_), features_, guard);
}

// -p's processes, or --cgroup's, watched by a pidfd each; one that does
// not exist is an error, except in a cgroup, whose processes come and go:
// those left are traced, and none left is an error.
void Recorder::attach_targets() {
  std::vector<pid_t> alive;
  for (pid_t pid : traced_pids(opts_)) {
    try {
      Target t = Target::attach(pid);
      if (!run_.target) run_.target = std::make_unique<Target>(std::move(t));
      else run_.others.push_back(std::move(t));
      alive.push_back(pid);
    } catch (const TargetError&) {
      if (!cgroup_) throw;
    }
  }
  if (alive.empty())
    throw RecordError("--cgroup=" + opts_.cgroup + ": every process of " + cgroup_->path +
                      " exited while atrace attached");
  opts_.pids = alive;
  opts_.pid = alive.front();
}

BpfSettings Recorder::bpf_settings(bool calibrating) const {
  BpfSettings bs;
  bs.buffer_bytes = opts_.buffer_bytes;
  bs.kernel_groups = opts_.kernel_groups;
  // The fast path names a thread by its thread pointer, which its fork
  // event carries (fastpath/thread_pointers.h).
  bs.thread_forks = opts_.fast_path;
  bs.follow_forks = opts_.follow_forks;
  bs.several = several_;
  if (cgroup_) {
    bs.cgroup_id = cgroup_->id;
    bs.cgroup_level = cgroup_->level;
  }
  bs.launch = opts_.pid <= 0;
  bs.multi = multi_;
  bs.filter = opts_.filter;
  bs.max_id = plan_.max_id;
  bs.values = plan_.values;
  bs.stacks = std::any_of(plan_.sites.begin(), plan_.sites.end(),
                          [](const uprobes::ProbeSite& s) { return s.with_stack; });
  bs.stack_depth = opts_.stack_depth;
  bs.verbose = opts_.verbose;
  bs.functions = !plan_.sites.empty() || calibrating;
  bs.usdt = !plan_.usdt.empty();
  bs.module_hooks = !watched_.empty();
  return bs;
}

// What a probe hit costs here, stored in the header for `report
// --compensate` and used by the filters: from the cache when it has this
// machine's, else measured (before the rings hand anything to the
// recording) and cached.
ProbeCost Recorder::probe_cost() {
  if (cached_cost_) return *cached_cost_;
  ProbeCost cost = bpf_->calibrate();
  store_cached_cost(kCalibrationCacheDir, cost_key_, cost);
  return cost;
}

// The target, held until the last moment; the tracepoints and the probes
// on it; the header. From the target's release on, it runs traced.
void Recorder::start(const ProbeCost& cost) {
  bpf_->start([this](const void* d, size_t n) { events_->on_record(d, n); });
  stop_if_signalled();
  auto& target = run_.target;
  if (!target) {
    bpf_->before_exec();
    target = std::make_unique<Target>(Target::launch_held(
        plan_.exe_path, opts_.command, opts_.output == "-", stop_.inherited_ignored()));
  }
  const pid_t pid = target->pid();
  // A followed command's processes are all alive and held (the first may
  // have ended, and would never leave the map).
  if (run_.follower)
    for (pid_t p : run_.follower->processes()) begin_tracing(p);
  else if (!target->launched())
    for (pid_t p : traced_pids(opts_)) begin_tracing(p);
  else begin_tracing(pid);
  if (follows_tree()) follow_tree();
  // Before any return probe and before atrace's thread-exit program.
  // With the fast path, the unwinders' entries are the trampolines' to patch
  // (a uprobe there would be written into the patched bytes): hot mode's
  // guard probes the trampolines instead, so they are written first.
  // A launched command's are written at its entry point (install_at_entry),
  // the guard's and the functions' probes on the files before its exec.
  auto guard_points = probes_.unwind_points;
  if (opts_.fast_path_hot && !plan_.sites.empty() && !fast_launch()) {
    install_hot(pid);
    guard_points = fast_->guard_points(guard_points);
  }
  if (probes_.unwind_guard && (!opts_.fast_path || opts_.fast_path_hot))
    probes_.unwind_guard->attach(guard_points, several_ ? kEveryProcess : pid);
  bpf_->attach_tracepoints();

  // Built before the probes go in: from there to the target's release,
  // as little as possible happens (a stop signal ends the run until then).
  run_.header = trace_header(opts_, features_, cost, pid,
                             target->launched() ? join(opts_.command) : target->command_line());
  run_.table = attach_probes(pid, filter_costs(cost.table()));
  if (!target->launched()) {
    forget_gone();
    std::vector<pid_t> traced;
    for (pid_t p : traced_pids(opts_))
      if (traced_.count(p)) traced.push_back(p);
    announce_targets(traced, cgroup_ ? cgroup_->shown : "");
  }
  run_.header.start_mono_ns = now_ns(CLOCK_MONOTONIC);
  run_.header.start_real_ns = now_ns(CLOCK_REALTIME);
  clocks_.start();
  push_start_events();
  // The last moment a launched target can be left unstarted. An attached
  // one is traced from its first probe on: a signal from here on stops the
  // recording at the drain loop's first look and keeps what was recorded.
  if (target->launched()) {
    stop_if_signalled();
    target->release();
    if (fast_launch()) install_at_entry();
    else if (run_.follower && follows_tree()) run_.follower->keep_following();
    else if (run_.follower) run_.follower->release();
  }
  run_.released_at = now_ns(CLOCK_MONOTONIC);
}

// --fast-path with a launched command: the program, held just after its
// exec, runs to its entry point, where ld.so has mapped every library it
// needs, and is patched there (record/entry_stop.h). What ran before (ld.so,
// the libraries' constructors) is not recorded. A failure kills the
// command: it does not run on untraced for a recording that failed before
// it began.
//
// With --follow-forks the follower stays the tracer of every process of
// the command, this one included once patched: the others wait, held,
// until it is, so that a fork child of the program gets its ring at its
// first stop (FastPath::forked), and an atrace killed from then on leaves
// them all running (ExecFollower::outlive_atrace).
void Recorder::install_at_entry() {
  const pid_t pid = run_.followed->pid;
  const bool tree = follows_tree();
  EntryStop entry(pid);
  run_.follower->hand_over(pid);
  if (!tree) run_.follower->release();  // any other process the command had started
  entry.run(stop_);
  if (tree) run_.follower->outlive_atrace();
  std::unique_ptr<fastpath::StoppedProcess> process =
      entry.stopped(tree ? run_.follower.get() : nullptr);
  try {
    if (opts_.fast_path_hot) {
      install_hot(pid, process.get());
      return;  // one process (no --follow-forks): nothing more to follow
    }
    const uint64_t start = now_ns(CLOCK_MONOTONIC);
    auto table = install_fast_path(at_entry_, pid, process.get());
    announce_probes(table, now_ns(CLOCK_MONOTONIC) - start, multi_, opts_.kernel_groups);
    run_.table.insert(run_.table.end(), table.begin(), table.end());
  } catch (...) {
    kill(pid, SIGKILL);
    throw;
  }
  if (!tree) return;
  run_.follower->on_fork([this](pid_t child) { return fast_all_->forked(child); });
  run_.follower->keep_following();
}

// Return probes made exception-safe (record/unwind_guard.h), loaded
// before the target is touched, on a thread of its own (BpfSession's
// Alongside): nothing else of the recorder is touched meanwhile. Where the kernel cannot run the
// guard, a program with a C++ unwinder is refused; any other is traced with a warning (only
// pthread_exit and cancellation unwind it).
void Recorder::load_unwind_guard(const SharedMapFds& shared) {
  probes_.unwind_points = uprobes::find_unwind_points(plan_.modules);
  try {
    UnwindGuardMaps maps;
    maps.rings = shared.rings;
    maps.lost = shared.lost;
    maps.traced_tgids = shared.traced_tgids;
    maps.thread_lost = shared.thread_lost;
    maps.lossy_threads = shared.lossy_threads;
    maps.unwind_states = shared.unwind_states;
    probes_.unwind_guard =
        std::make_unique<UnwindGuard>(maps, plan_.sites, multi_, features_.task_work);
  } catch (const UnwindGuardError& e) {
    for (const auto& p : probes_.unwind_points)
      for (const auto& m : plan_.modules)
        if (p.path == m.path && p.role == uprobes::UnwindRole::Start)
          throw RecordError(std::string(e.what()) +
                            ": a C++ exception through a traced function of " + m.name +
                            " would abort it");
    base::warning(
        "return probes are not exception-safe here (%s): a thread "
        "that calls pthread_exit or is cancelled inside a traced function will crash",
        e.what());
  }
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
      set_limits(site, st);
      // --fast-path=hot: the programs would turn it off at once, losing
      // its calls until the switch; the recorder's decision (each tick)
      // patches it instead, with no call lost.
      if (hot_limits_off(site.id)) st.limit_ns = st.early_limit_ns = 0;
    }
    // What the programs take off the callers' measured durations when
    // this function returns (its probes ran inside them).
    st.cost_ns = costs.cost_ns[path % costs.cost_ns.size()];
    bpf_->set_fn_state(site.id, st);
  }
}

// The absolute rule's limits the programs apply to `site` (its path's share
// of the probe cost added to the threshold).
void Recorder::set_limits(const uprobes::ProbeSite& site, atrace_fn_state& st) const {
  const uint64_t floor =
      costs_.floor_ns[static_cast<size_t>(site.entry_path) % costs_.floor_ns.size()];
  st.limit_ns = absolute_limit_ns(opts_.filter.threshold_ns, floor);
  st.early_limit_ns = early_limit_ns(opts_.filter.threshold_ns, floor);
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
    base::warning(
        "%zu function(s) start with an instruction the kernel cannot "
        "probe and are not traced (first: %s in %s)",
        refused.size(), refused.front()->name.c_str(), refused.front()->module.c_str());
  if (fast_launch()) {
    at_entry_ = attachable;  // none is mapped before the exec
    // Hot: on the kernel's probes until the entry point, and after for
    // what is not patched (install_hot).
    if (!opts_.fast_path_hot) return {};
  }
  if (opts_.fast_path && !opts_.fast_path_hot)
    return install_fast_path(attachable, run_.target->pid());
  if (attachable.empty())
    throw RecordError("no selected function can be probed: " + refused.front()->name +
                      " starts with an instruction the kernel refuses to probe");
  auto failures = probes_.functions->attach(attachable);
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
  base::warning("%zu of %zu functions could not be probed (first: %s)", failures.size(),
                attachable.size(), what.c_str());
  return table;
}

// The table's rows of the functions `f` patched (path "patched").
std::vector<formats::ProbeInfo> patched_rows(const FastPath& f,
                                             const std::vector<uprobes::ProbeSite>& sites) {
  std::vector<formats::ProbeInfo> rows;
  for (const auto& s : sites) {
    if (!f.patchable(s.id)) continue;
    formats::ProbeInfo info = probe_info(s);
    info.path_kind = formats::ProbePath::Patched;
    info.entry_delta = 0;
    rows.push_back(std::move(info));
  }
  return rows;
}

// "name: why" of the first function `f` refused ("" when none).
std::string first_refusal(const FastPath& f, const std::vector<uprobes::ProbeSite>& sites) {
  if (f.refused().empty()) return "";
  const auto& first = f.refused().front();
  const auto site = std::find_if(sites.begin(), sites.end(),
                                 [&](const uprobes::ProbeSite& s) { return s.id == first.id; });
  return (site != sites.end() ? site->name : std::to_string(first.id)) + ": " + first.reason;
}

// --fast-path: patches what it can of `sites` and returns their table
// entries (path "patched"). A function that cannot be patched is not
// traced at all: the kernel's return probes are safe only with the unwind
// guard, whose uprobes would sit where the unwinders' trampolines are
// patched (docs/fast-path.md, "When each path is used").
std::vector<formats::ProbeInfo> Recorder::install_fast_path(
    const std::vector<uprobes::ProbeSite>& sites, pid_t pid, fastpath::StoppedProcess* held) {
  const uint64_t start = now_ns(CLOCK_MONOTONIC);
  fast_ = std::make_unique<FastPath>(pid, sites, probes_.unwind_points, opts_.fast_path_lane_slots,
                                     held);
  fast_all_ = std::make_unique<FastPaths>(*fast_);
  if (opts_.follow_forks) fast_->follow_forks(follows_tree() ? run_.follower.get() : nullptr);
  std::vector<formats::ProbeInfo> table = patched_rows(*fast_, sites);
  if (const auto& refused = fast_->refused(); !refused.empty()) {
    const std::string first = first_refusal(*fast_, sites);
    if (table.empty())
      throw RecordError("--fast-path: no selected function can be patched (first: " + first + ")");
    base::warning("--fast-path: %s cannot be patched and are not traced (first: %s)",
                  base::plural(refused.size(), "function").c_str(), first.c_str());
  }
  const FastPathStats st = fast_->stats();
  base::progress("--fast-path: %s patched in %.1f ms, the program stopped %.2f ms",
                 base::plural(table.size(), "function").c_str(),
                 static_cast<double>(now_ns(CLOCK_MONOTONIC) - start) / 1e6,
                 static_cast<double>(st.install_stop_ns) / 1e6);
  return table;
}

// A function patched in another program already (the same file, the
// same place: libc's in each program a shell runs) keeps its id: one row
// in the table, one function in the reports. The first program's
// functions are the first known.
void Recorder::same_functions_as_before(ExecPlan& plan) {
  if (patched_places_.empty())
    for (const auto& s : at_entry_)
      if (auto id = uprobes::file_id(s.path)) patched_places_.try_emplace({*id, s.offset}, s.id);
  std::map<std::string, std::optional<uprobes::FileId>> files;
  for (auto& site : plan.sites) {
    auto [f, fresh] = files.try_emplace(site.path);
    if (fresh) f->second = uprobes::file_id(site.path);
    if (!f->second) continue;
    auto [known, added] = patched_places_.try_emplace({*f->second, site.offset}, site.id);
    if (added) plan.fresh_ids.insert(site.id);
    else site.id = known->second;
  }
}

// --fast-path --follow-forks: a program a followed process exec'd, held
// just after the exec, is patched as the first one was (install_at_entry):
// run to its entry point and patched there with an install of its own
// (fast_paths.h), whose fork children get their rings at their first
// stop. A program seen before reuses its plan (its ids, its table rows).
// What cannot be patched is said, and the process goes on unrecorded; a
// killed atrace leaves it running (no PTRACE_O_EXITKILL). Returns whether
// it took the process (let it go itself).
bool Recorder::patch_exec(const ExecMatch& m) {
  const auto program = uprobes::file_id("/proc/" + std::to_string(m.pid) + "/exe");
  if (!program) return false;
  auto [it, fresh] = exec_plans_.try_emplace(*program);
  ExecPlan& plan = it->second;
  if (fresh) {
    std::vector<uprobes::Module> modules;
    ResolvedModules none;
    try {
      // Every selected function of it, in every module it maps: the
      // places patched in other processes are not this one's.
      plan.sites = plan_exec(opts_, features_, m, next_id_, {}, none, modules);
    } catch (const std::exception& e) {
      status_.clear();
      base::warning("%s exec'd by process %d: not patched (%s)", m.exe.c_str(), m.pid, e.what());
      return false;
    }
    plan.unwinders = uprobes::find_unwind_points(modules);
    for (const auto& site : plan.sites) next_id_ = std::max(next_id_, site.id + 1);
    same_functions_as_before(plan);
  }
  if (plan.sites.empty()) return false;
  run_.follower->hand_over(m.pid);
  auto not_patched = [&](const std::string& why) {
    status_.clear();
    base::warning("%s exec'd by process %d: not patched (%s)", m.exe.c_str(), m.pid, why.c_str());
  };
  try {
    EntryStop entry(m.pid, /*die_with_atrace=*/false);
    entry.run(stop_);
    std::unique_ptr<fastpath::StoppedProcess> process = entry.stopped(run_.follower.get());
    auto install = std::make_unique<FastPath>(m.pid, plan.sites, plan.unwinders,
                                              opts_.fast_path_lane_slots, process.get());
    install->follow_forks(run_.follower.get());
    std::vector<formats::ProbeInfo> rows = patched_rows(*install, plan.sites);
    if (rows.empty()) {
      not_patched(first_refusal(*install, plan.sites));
      return true;
    }
    // Said for a program's first process; a shell runs some thousands.
    if (fresh) {
      status_.clear();
      base::progress("%s exec'd by process %d: %s patched, the program stopped %.2f ms",
                     m.exe.c_str(), m.pid, base::plural(rows.size(), "function").c_str(),
                     static_cast<double>(install->stats().install_stop_ns) / 1e6);
    }
    ++execs_patched_;
    fast_all_->add(std::move(install));
    if (!std::exchange(plan.in_table, true)) {
      std::erase_if(rows, [&](const formats::ProbeInfo& r) { return !plan.fresh_ids.count(r.id); });
      add_probe_rows(std::move(rows));
    }
  } catch (const RecordInterrupted& e) {
    // The stop signal was for the recording, which it ends as ever.
    kill(getpid(), e.signal);
    not_patched("the recording was stopped");
  } catch (const std::exception& e) {
    not_patched(e.what());
  }
  return true;
}

// --fast-path=hot: every selected function that can be patched gets its
// trampoline now, from its entry as the file has it (no uprobe is there
// yet), switched off: nothing changes in the program's functions until the
// filter decides (record/hot_switch.h). The unwinders' entries are patched
// now (their trampolines give a patched frame's return address back before
// an unwind, as in --fast-path=all), and the unwind guard then probes those
// trampolines (docs/fast-path.md, "Hot functions", design steps 1 and 2).
// An unwinder that cannot be patched refuses the recording: a patched
// frame would unwind into the return stub.
//
// A launched command (`held`, at its entry point: install_at_entry) has
// had the guard's and the functions' probes since before its exec: the
// trampolines are made from the files' bytes, the guard's probes are taken
// off the unwinders' entries before those are patched and put on their
// trampolines after, and only then is the program let go.
void Recorder::install_hot(pid_t pid, fastpath::StoppedProcess* held) {
  const uint64_t start = now_ns(CLOCK_MONOTONIC);
  if (held && probes_.unwind_guard) probes_.unwind_guard->detach_points();
  fast_ = std::make_unique<FastPath>(pid, plan_.sites, probes_.unwind_points,
                                     opts_.fast_path_lane_slots, held, /*start_on=*/false,
                                     /*code_from_files=*/held != nullptr);
  fast_all_ = std::make_unique<FastPaths>(*fast_);
  if (!fast_->unwinder_refusal().empty())
    throw RecordError("--fast-path=hot: an unwinder's entry cannot be patched (" +
                      fast_->unwinder_refusal() + "): a patched function's frame would unwind " +
                      "into the fast path's return stub");
  uint64_t stopped_ns = fast_->stats().install_stop_ns;
  if (held) {
    if (probes_.unwind_guard)
      probes_.unwind_guard->attach_points(fast_->guard_points(probes_.unwind_points), pid);
    if (opts_.filter.active()) restore_limits();
    if (probes_.relevance) probes_.relevance->patch_with(fast_.get());
    held->release();
    stopped_ns = static_cast<uint64_t>(held->times().held.count());
  }
  base::progress(
      "--fast-path=hot: %s ready to patch (trampolines written, entries unchanged) in %.1f ms, "
      "the program stopped %.2f ms",
      base::plural(fast_->patched().size(), "function").c_str(),
      static_cast<double>(now_ns(CLOCK_MONOTONIC) - start) / 1e6,
      static_cast<double>(stopped_ns) / 1e6);
}

// Hot: a function with a trampoline is judged by the recorder alone (the
// programs' own early off would lose its calls until the switch); a
// launched command's are not known before its entry point, so every
// function is until then (restore_limits).
bool Recorder::hot_limits_off(uint32_t id) const {
  if (!opts_.fast_path_hot) return false;
  return fast_ ? fast_->patchable(id) : fast_launch();
}

// A launched command at its entry point, held: the functions without a
// trampoline get the programs' limits back (set_filter_state's), the rest
// of their state (links' generation, off flag) kept.
void Recorder::restore_limits() {
  if (opts_.filter.mode != FilterMode::Absolute) return;
  for (const auto& site : plan_.sites) {
    if (fast_->patchable(site.id)) continue;
    atrace_fn_state st{};
    if (bpf_map_lookup_elem(bpf_->fn_state_fd(), &site.id, &st) != 0) continue;
    set_limits(site, st);
    bpf_->set_fn_state(site.id, st);
  }
}

// The time before which the reorder window releases events: the window
// behind now, and not past what a lane of the fast path read only in part
// has given.
uint64_t Recorder::release_edge(uint64_t now) const {
  uint64_t edge = now > kReorderWindowNs ? now - kReorderWindowNs : 0;
  if (fast_all_) {
    const uint64_t until = fast_all_->complete_until_ns();
    if (until != UINT64_MAX)
      edge = std::min(edge, until > kReorderWindowNs ? until - kReorderWindowNs : 0);
  }
  return edge;
}

// The fast path uninstalled (or the process gone) with records still in
// its lanes (they outlive the process): read in batches, each delivered as it leaves the reorder
// window, so that millions of them never sit in memory at once. Ends when
// every lane is read, or after 100 drains in a row found nothing (a slot
// its dead writer never committed is given up within the commit wait).
void Recorder::drain_fast_path_rest() {
  for (int idle = 0; !fast_all_->drained() && idle < 100;) {
    const uint64_t before = events_->events();
    drain_fast_path();
    if (events_->events() == before) {
      ++idle;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    } else {
      idle = 0;
    }
    deliver(events_->held().take_until(release_edge(now_ns(CLOCK_MONOTONIC))));
  }
}

void Recorder::drain_fast_path() {
  fast_events_.clear();
  fast_all_->drain(fast_events_);
  for (auto& ev : fast_events_) events_->add_event(std::move(ev));
}

// Before the kernel's probes go: the process is stopped once more, its
// code and return addresses given back, the rest of the ring drained.
void Recorder::finish_fast_path() {
  fast_all_->uninstall();
  drain_fast_path_rest();
  const FastPathStats st = fast_all_->stats();
  if (opts_.verbose) {
    char undo[64];
    if (st.uninstall_stop_ns)
      std::snprintf(undo, sizeof undo, "the program stopped %.2f ms to undo",
                    static_cast<double>(st.uninstall_stop_ns) / 1e6);
    else std::snprintf(undo, sizeof undo, "nothing to undo (the process is gone)");
    base::progress("--fast-path: %llu records, %s; time stamps within %.0f ns of CLOCK_MONOTONIC",
                   static_cast<unsigned long long>(st.records), undo,
                   static_cast<double>(st.conversion_error_ns));
  }
  if (!st.undo_failed.empty())
    base::warning(
        "--fast-path: the program's code could not be given back (%s): it runs on with its "
        "trampolines, whose records nobody reads (docs/fast-path.md)",
        st.undo_failed.c_str());
  // Each cause in its own words: a full lane wants a bigger buffer, a
  // record given up was a writer held longer than the commit wait
  // (preempted, or left by a signal handler's longjmp: ring_reader.h).
  if (st.full)
    base::warning(
        "--fast-path: %s lost, their lane full (atrace read too slowly; --fast-path-buffer "
        "gives each CPU's lane more room)",
        base::plural(st.full, "record").c_str());
  if (st.given_up)
    base::warning(
        "--fast-path: %s lost: reserved but not written within %.0f ms (a thread held in the "
        "trampoline on a loaded machine, or left there by a signal handler's longjmp)",
        base::plural(st.given_up, "record").c_str(),
        static_cast<double>(kFastPathCommitWaitNs) / 1e6);
  if (execs_patched_) {
    const auto files = std::count_if(exec_plans_.begin(), exec_plans_.end(),
                                     [](const auto& p) { return p.second.in_table; });
    base::progress("--fast-path: %s exec'd by the command's processes patched (%s)",
                   base::plural(execs_patched_, "program").c_str(),
                   base::plural(static_cast<uint64_t>(files), "different file").c_str());
  }
  if (st.children || st.children_not_ringed) {
    base::progress("--fast-path: %s given a ring of its own (%llu undone at the end)",
                   base::plural(st.children, "fork child", "fork children").c_str(),
                   static_cast<unsigned long long>(st.children_undone));
  }
  if (st.child_calls_before_ring)
    base::warning(
        "--fast-path: %s of fork children not recorded: made before atrace gave the child a "
        "ring (counted by the trampolines)",
        base::plural(st.child_calls_before_ring, "call").c_str());
  // Following a launched command, each exec'd program is patched on its
  // own (patch_exec), or said why not there.
  if (st.children_execd && !follows_tree())
    base::warning(
        "--fast-path: %s exec'd: the programs they ran are not patched, their calls not recorded",
        base::plural(st.children_execd, "fork child", "fork children").c_str());
  if (st.children_not_ringed)
    base::warning("--fast-path: %s not recorded: no ring given (first: %s)",
                  base::plural(st.children_not_ringed, "fork child", "fork children").c_str(),
                  st.child_refusal.c_str());
  if (st.malformed)
    base::warning("--fast-path: %s lost: written with a kind no trampoline writes",
                  base::plural(st.malformed, "record").c_str());
  if (st.unknown_thread)
    base::warning(
        "--fast-path: %llu records of threads atrace could not name were left out (their "
        "creation was not seen)",
        static_cast<unsigned long long>(st.unknown_thread));
}

void Recorder::attach_usdt(std::vector<formats::ProbeInfo>& table) {
  auto failures = probes_.usdt->attach(plan_.usdt);
  if (probes_.usdt->attached().empty()) {
    if (table.empty())
      throw RecordError("no USDT probe could be attached (" + failures.front() + ")");
  } else if (!failures.empty()) {
    base::warning("%zu of %zu USDT probes could not be attached (first: %s)", failures.size(),
                  plan_.usdt.size(), failures.front().c_str());
  }
  std::map<uint32_t, const uprobes::UsdtTarget*> by_id;
  for (const auto& t : plan_.usdt) by_id[t.id] = &t;
  for (uint32_t id : probes_.usdt->attached()) table.push_back(probe_info(*by_id.at(id)));
}

// The dynamic linker of a plan that waits for a module (its list of
// loaded objects then tells which file came instead: late_arrivals.h),
// "" when none is waited for or the program has no ld.so.
std::string waited_for_linker(const std::vector<uprobes::Module>& modules) {
  if (std::none_of(modules.begin(), modules.end(),
                   [](const uprobes::Module& m) { return m.waiting; }))
    return {};
  for (const auto& m : modules)
    if (m.name.rfind("ld-", 0) == 0 && m.name.find(".so") != std::string::npos) return m.path;
  return {};
}

// The probes, the filters' state first, then the filters: returns the
// probe table.
std::vector<formats::ProbeInfo> Recorder::attach_probes(pid_t pid, const FilterCosts& costs) {
  // Followed children need the probes in every process that maps the
  // module; the programs then keep only traced processes' hits.
  const pid_t where = several_ ? kEveryProcess : pid;
  probes_.functions = std::make_unique<FunctionProbes>(bpf_->func_entry_program(),
                                                       bpf_->func_exit_program(), where, multi_);
  probes_.functions->set_value_programs(bpf_->values_entry_program(), bpf_->values_exit_program());
  probes_.functions->set_stack_program(bpf_->stack_entry_program());
  costs_ = costs;
  if (opts_.filter.active()) set_filter_state(costs);
  std::vector<formats::ProbeInfo> table;
  const uint64_t attach_start = now_ns(CLOCK_MONOTONIC);
  if (!plan_.sites.empty()) table = attach_functions();
  probes_.usdt = std::make_unique<UsdtProbes>(bpf_->usdt_program(), bpf_->usdt_string_program(),
                                              where, bpf_->usdt_specs());
  if (!plan_.usdt.empty()) attach_usdt(table);
  if (!watched_.empty()) {
    probes_.modules = std::make_unique<ModuleWatch>(bpf_->module_hook_program(), watched_, where,
                                                    waited_for_linker(plan_.modules));
    if (probes_.modules->unwatched() && opts_.verbose)
      base::progress("%zu module(s) without DT_INIT/DT_FINI: no MODULE events",
                     probes_.modules->unwatched());
  }
  if (!table.empty())
    announce_probes(table, now_ns(CLOCK_MONOTONIC) - attach_start, multi_, opts_.kernel_groups);
  // The filters judge functions only: USDT probes are the program's own
  // choice of what matters.
  std::vector<formats::ProbeInfo> functions;
  for (const auto& p : table)
    if (p.kind == formats::ProbeKind::Function) functions.push_back(p);
  if (opts_.filter.active() && !functions.empty()) {
    try {
      probes_.relevance = std::make_unique<RelevanceRun>(
          opts_.filter, *probes_.functions, bpf_->fn_state_fd(), bpf_->fn_stat_fd(), bpf_->ncpus(),
          pid, functions, plan_.keep_ids, costs.floor_ns, costs.cost_ns);
      if (opts_.fast_path_hot) probes_.relevance->patch_with(fast_.get());
    } catch (const std::exception& e) {
      // Kept: the prefix tells the user which part of the recording failed.
      throw RecordError(std::string("relevance filters: ") + e.what());
    }
  }
  return table;
}

// The events that say how the recording starts: an attached process's
// modules were mapped before (a launched one's MODULE events come from its
// exec); a followed command's exec happened just before (the program has
// run none of its instructions yet).
void Recorder::push_start_events() {
  const uint64_t t = run_.header.start_mono_ns;
  if (!run_.target->launched())
    for (auto& ev : modules_mapped_now(watched_, run_.target->pid(), t))
      events_->held().push(std::move(ev));
  if (run_.followed) {
    formats::Event ev;
    ev.kind = formats::EventKind::ProcExec;
    ev.ts = t;
    ev.pid = ev.tid = static_cast<uint32_t>(run_.followed->pid);
    ev.text = run_.followed->exe;
    events_->held().push(std::move(ev));
  }
}

// A write error (disk full, reader gone) stops the recording at once and
// is said at once; what follows then writes nothing more.
void Recorder::writing(RecordResult& r, const std::function<void()>& write) {
  if (!r.write_error.empty()) return;
  try {
    write();
  } catch (const formats::WriteError& e) {
    r.write_error = e.what();
    base::error("%s: recording stopped", e.what());
  }
}

// The header, then every event as it leaves the reorder window, until the
// target exits, a signal, the duration or the sink ends the recording.
void Recorder::record_events(RecordResult& r) {
  if (out_.writer) {
    // On the writing thread, so that the drain loop starts now: a write
    // held up by the disk must not keep it from the buffers.
    out_.async = std::make_unique<AsyncEventWriter>(*out_.writer);
    if (opts_.rotate.enabled())
      out_.rotation = std::make_unique<Rotation>(opts_.rotate, opts_.output, run_.header);
    out_.async->run([this, header = run_.header, table = run_.table, clocks = clocks_.take()] {
      out_.writer->write_header(header);
      if (out_.rotation) out_.writer->write_series(out_.rotation->first_series());
      out_.writer->write_probes(table);
      out_.writer->write_clocks(clocks);
      out_.file->commit();
    });
  }
  if (sink_) sink_->begin(run_.header, run_.table);
  writing(r, [&] {
    DrainLoop loop;
    loop.rings_fd = bpf_->rings_fd();
    loop.target_fd = run_.target->pidfd();
    loop.stop = &stop_;
    loop.period_ns = bpf_->drain_period_ns();
    if (fast_) loop.period_ns = std::min(loop.period_ns, kFastPathDrainPeriodNs);
    if (opts_.duration_s > 0)
      loop.deadline_ns = run_.header.start_mono_ns + static_cast<uint64_t>(opts_.duration_s * 1e9);
    loop.several = several_;
    loop.processes_left = [this] { return bpf_->processes_left(); };
    loop.on_wake = [this](uint64_t now) { return on_wake(now); };
    if (run_.follower && follows_tree()) {
      loop.children_fd = run_.follower->fd();
      loop.on_children = [this] {
        run_.follower->handle_events([this](const ExecMatch& m) { return on_exec(m); });
      };
      loop.on_children();  // execs held since the match (exec_follow.h)
    }
    run_until_stop(loop);
    status_.clear();
  });
}

// Events leave the reorder window to the sink and to the file (through
// the writing thread while recording).
void Recorder::deliver(std::vector<formats::Event>&& events) {
  // Before the events of a process: a killed recorder's file names it too.
  if (auto fresh = events_->processes().take_new(); !fresh.empty()) {
    if (out_.async)
      out_.async->run([this, fresh = std::move(fresh)] { out_.writer->write_processes(fresh); });
    else if (out_.writer) out_.writer->write_processes(fresh);
  }
  if (sink_ && !events.empty()) sink_->events(events);
  if (out_.async) out_.async->write_events(std::move(events));
  else if (out_.writer) out_.writer->write_events(events);
  if (out_.async && out_.rotation)
    out_.async->run([this] { out_.rotation->note_size(*out_.writer); });
}

// --rotate: the file ends after the events delivered so far (those before
// the reorder window's `edge`), the next begins there, with the tables a
// reader of it alone needs (rotation.h).
void Recorder::rotate_if_due(uint64_t now, uint64_t edge) {
  if (!out_.async || !out_.rotation || !out_.rotation->due(now)) return;
  Rotation::Cut c;
  c.mono_ns = edge;
  c.real_ns = now_ns(CLOCK_REALTIME) - (now_ns(CLOCK_MONOTONIC) - edge);
  c.names = events_->threads().table();
  c.lost = bpf_->read_lost();
  c.old_clocks = clocks_.take();
  c.new_clocks = host_identity();
  c.new_clocks.snapshots.push_back(read_clocks(formats::ClockSnapshot::When::Periodic));
  c.probes = run_.table;
  c.processes = events_->processes().all();
  out_.rotation->cut_queued(c);
  out_.async->run([this, c = std::move(c)] { out_.rotation->rotate(*out_.writer, c); });
}

// Every wake-up of the drain loop: the filters' decisions, then what the
// rings hold, written once it is older than the reorder window. True when
// the sink ends the recording.
bool Recorder::on_wake(uint64_t now) {
  if (cgroup_ || opts_.follow_forks) note_joined();
  if (probes_.relevance) {
    bpf_->drain();  // hints first, then the decisions
    for (auto& ev : probes_.relevance->tick(now)) events_->held().push(std::move(ev));
  }
  bpf_->drain();
  if (fast_) drain_fast_path();
  if (clocks_.due(now) && out_.async)
    out_.async->run([this, clocks = clocks_.take()] { out_.writer->write_clocks(clocks); });
  // Called even with nothing to write: the writer flushes blocks by age.
  const uint64_t edge = release_edge(now);
  deliver(events_->held().take_until(edge));
  rotate_if_due(now, edge);
  // The loss counters cost a map read per kind: only for a visible line.
  if (status_.enabled())
    status_.show(run_.table.size(), events_->events(), bpf_->read_lost().total(),
                 static_cast<double>(now - run_.header.start_mono_ns) / 1e9);
  return sink_ && sink_->tick(now);
}

// The recording ends now: no call starts from here on, and the calls in
// flight that return while the probes are being detached still close
// (bpf/atrace.bpf.c, stop_gate). Detaching takes a grace period or two a
// link: when the traced processes are gone, a helper waits them out
// instead of atrace (link_reaper.h).
void Recorder::detach() {
  release_tree();
  bpf_->stopping();
  run_.header.end_mono_ns = now_ns(CLOCK_MONOTONIC);
  run_.header.end_real_ns = now_ns(CLOCK_REALTIME);
  clocks_.stop();
  // With --follow-forks the probes are in every process that maps the
  // module: those are not gone. Taken before anything is closed, the
  // filters' old links included.
  const bool target_gone = !several_ && run_.target->exited();
  if (target_gone) reaper_ = hand_links_to_reaper();
  if (reaper_ && opts_.verbose)
    base::progress("the target has exited: its probes are closed in the background");
  if (probes_.relevance) {
    probes_.relevance->finish();
    run_.detached = probes_.relevance->detached();
    if (auto line = probes_.relevance->summary(); !line.empty()) base::progress("%s", line.c_str());
  }
  // Stop: returns, then entries (attach.h), then everything in flight.
  const uint64_t detach_start = now_ns(CLOCK_MONOTONIC);
  if (fast_) finish_fast_path();
  probes_.functions->detach_all();
  probes_.relevance.reset();  // its closes return once every probe is gone (detacher.h)
  probes_.usdt->detach_all();
  probes_.modules.reset();
  if (opts_.verbose && !run_.table.empty())
    base::progress("detached %zu probes in %.1f ms", run_.table.size(),
                   static_cast<double>(now_ns(CLOCK_MONOTONIC) - detach_start) / 1e6);
  if (!run_.target->exited()) events_->threads().refresh_names();
  bpf_->drain();
}

// The rest of the events, then the trace's end (its thread table and loss
// counts) and the exclude list of what the filters detached.
void Recorder::write_rest(RecordResult& r) {
  auto rest = events_->held().take_all();
  if (!rest.empty()) writing(r, [&] { deliver(std::move(rest)); });
  // Exits of calls in flight at the stop come after it.
  auto& header = run_.header;
  header.end_mono_ns = std::max(header.end_mono_ns, events_->last_event_ts());
  std::string full_kinds;
  formats::LostCounts lost = bpf_->read_lost(&full_kinds);
  if (!full_kinds.empty()) {
    r.lost_by_kind = "buffer full: " + full_kinds;
    r.lost_hint = "--buffer-size";
  }
  // The fast path's ring is one more place events are lost, by CPU too,
  // and for more reasons than a full lane (each also said on its own line).
  if (fast_all_) {
    const FastPathStats st = fast_all_->stats();
    if (lost.per_cpu.size() < st.lost_per_lane.size()) lost.per_cpu.resize(st.lost_per_lane.size());
    for (size_t i = 0; i < st.lost_per_lane.size(); i++) lost.per_cpu[i] += st.lost_per_lane[i];
    std::vector<std::string> why;
    if (st.full) why.push_back(std::to_string(st.full) + " lane full");
    if (st.given_up) why.push_back(std::to_string(st.given_up) + " not written in time");
    if (st.malformed) why.push_back(std::to_string(st.malformed) + " malformed");
    if (!why.empty())
      r.lost_by_kind +=
          (r.lost_by_kind.empty() ? "" : "; ") + std::string("fast-path: ") + join(why, ", ");
    if (st.full)
      r.lost_hint =
          r.lost_hint.empty() ? "--fast-path-buffer" : "--buffer-size and --fast-path-buffer";
  }
  const auto threads = events_->threads().table();
  if (out_.writer) {
    writing(r, [&] {
      if (out_.async) out_.async->flush();
      out_.async.reset();
      out_.writer->write_clocks(clocks_.take());
      if (out_.rotation) out_.rotation->finish(*out_.writer, header, threads, lost);
      else out_.writer->finish(header, threads, lost);
    });
    // After a write error the disk or pipe is gone: one message said so.
    if (r.write_error.empty())
      write_exclude_list(run_.detached, opts_.output, plan_.exe_path, opts_.pid);
  }
  if (sink_) sink_->end(header, threads, lost);
  events_->warn();
  r.events = events_->events();
  r.hits = events_->hits();
  r.lost = lost.total();
  r.probes = run_.table.size();
}

// Nothing of atrace's stays in the kernel while a launched target is
// waited for.
void Recorder::teardown(RecordResult&) {
  probes_ = Probes{};
  // --fast-path=hot: the unwinders' entries, once the guard on their
  // trampolines is gone.
  if (fast_)
    if (auto why = fast_->uninstall_unwinders(); !why.empty())
      base::warning(
          "--fast-path=hot: the unwinders' entries could not be given back (%s): they keep "
          "jumping to their trampolines, which work on",
          why.c_str());
  bpf_.reset();
  reaper_ = {};  // the helper may close its copies now
}

// --follow-forks: the launched command followed from here to the end
// (ExecFollower: seized before it runs, unless it was followed to its
// program already), and what is probed noted, so that a program exec'd
// later gets only the probes it lacks. Without ptrace (atrace run with
// file capabilities only), exec'd programs are probed only where their
// files were probed at the start, as before; said once.
void Recorder::follow_tree() {
  probed_places_ = probed_places(plan_.modules, plan_.sites);
  resolved_modules_ = resolved_modules(plan_.modules);
  next_id_ = plan_.max_id + 1;
  for (const auto& u : plan_.usdt) next_id_ = std::max(next_id_, u.id + 1);
  if (auto id = uprobes::file_id(run_.followed ? run_.followed->exe : plan_.exe_path))
    planned_programs_.insert(*id);
  if (run_.follower) return;
  try {
    run_.follower = std::make_unique<ExecFollower>(run_.target->pid(), true);
  } catch (const TargetError& e) {
    base::warning(
        "%s: programs the command's processes exec are probed only where the files probed now "
        "are theirs",
        e.what());
  }
}

// --follow-forks: a followed process exec'd a program and is held just
// after the exec. The selectors are resolved again for it and the
// functions not probed yet attached before it runs its first instruction
// (a file probed already is probed in it as in every process: uprobes are
// per inode, and the pid stays in the map the programs filter on). A
// program seen before is not resolved again. Nothing here stops the
// recording: what cannot be probed is said, and the process goes on.
bool Recorder::on_exec(const ExecMatch& m) {
  if (fast_all_) return patch_exec(m);
  if (!probes_.functions) return false;
  const auto program = uprobes::file_id("/proc/" + std::to_string(m.pid) + "/exe");
  if (!program || !planned_programs_.insert(*program).second) return false;
  std::vector<uprobes::ProbeSite> sites;
  std::vector<uprobes::Module> modules;
  try {
    sites = plan_exec(opts_, features_, m, next_id_, probed_places_, resolved_modules_, modules);
  } catch (const std::exception& e) {
    status_.clear();
    base::warning("%s exec'd by process %d: not probed (%s)", m.exe.c_str(), m.pid, e.what());
    return false;
  }
  if (sites.empty()) return false;
  // Its C++ unwinder must be guarded before its functions get return
  // probes (unwind_guard.h): a file the guard has not probed is refused.
  const auto points = uprobes::find_unwind_points(modules);
  for (const auto& p : points) {
    if (p.role != uprobes::UnwindRole::Start) continue;
    const bool guarded = std::any_of(
        probes_.unwind_points.begin(), probes_.unwind_points.end(),
        [&](const uprobes::UnwindPoint& q) { return q.path == p.path && q.offset == p.offset; });
    if (guarded) continue;
    status_.clear();
    base::warning(
        "%s exec'd by process %d: not probed (its C++ unwinder in %s is not guarded: an "
        "exception through a traced function would abort it)",
        m.exe.c_str(), m.pid, uprobes::seen_path(p.path).c_str());
    return false;
  }
  auto failures = probes_.functions->attach(sites);
  std::set<uint32_t> failed;
  for (const auto& f : failures) failed.insert(f.site->id);
  std::vector<formats::ProbeInfo> rows;
  for (const auto& site : sites) {
    next_id_ = std::max(next_id_, site.id + 1);
    if (failed.count(site.id)) continue;
    rows.push_back(probe_info(site));
    for (const auto& mod : modules)
      if (mod.path == site.path)
        probed_places_.insert({mod.id.dev || mod.id.ino
                                   ? mod.id
                                   : uprobes::file_id(mod.path).value_or(uprobes::FileId{}),
                               site.offset});
  }
  status_.clear();
  base::progress("%s exec'd by process %d: %s more probed%s", m.exe.c_str(), m.pid,
                 base::plural(rows.size(), "function").c_str(),
                 failures.empty() ? "" : (" (" + failures.front().reason + ")").c_str());
  add_probe_rows(std::move(rows));
  return false;
}

// Functions probed or patched during the recording: into the table, and
// into the trace before the events that use them.
void Recorder::add_probe_rows(std::vector<formats::ProbeInfo> rows) {
  if (rows.empty()) return;
  run_.table.insert(run_.table.end(), rows.begin(), rows.end());
  if (out_.async)
    out_.async->run([this, rows = std::move(rows)] { out_.writer->write_probes(rows); });
  else if (out_.writer) out_.writer->write_probes(rows);
}

// The followed processes go on unfollowed; the command's own process, if
// it ended while followed, was reaped there (its status kept for run()).
void Recorder::release_tree() {
  if (!run_.follower || !follows_tree()) return;
  // The fast path's undo stops the processes through their tracer.
  if (fast_all_) fast_all_->uninstall();
  run_.follower->release();
  if (auto status = run_.follower->top_status()) run_.target->reaped(*status);
}

// A process traced by atrace's hand (-p, --cgroup's processes at the
// start, a launched or followed command): into the map the programs
// filter on. Those the programs add themselves (a followed child, a
// process exec'd in --cgroup's cgroup) are found by note_joined().
void Recorder::begin_tracing(pid_t pid) {
  bpf_->trace(pid);
  became_traced(pid);
}

// The one place where every process that becomes traced passes, once:
// from begin_tracing() before the probes go in, from note_joined() on the
// drain loop's wake-ups for those the programs added (a short-lived child
// may be gone before it is seen here). What is kept about the traced
// processes is kept from here: what the user knows each by (its pid in
// its own namespace, its cgroup: record/process_info.h) is read now, while
// it lives, and goes into the trace before the next events (the event
// collector notes any other process whose events arrive).
void Recorder::became_traced(pid_t pid) {
  traced_.insert(pid);
  events_->processes().note(pid);
}

// Processes the programs added to the map since the last look: a child of
// a traced process (--follow-forks, --cgroup), a program started in
// --cgroup's cgroup. Their files were probed at the start when they are
// the same files (probes are per inode, in every process); a file the
// selectors name that no process had at the start is said, once.
void Recorder::note_joined() {
  for (pid_t pid : bpf_->traced_processes()) {
    if (traced_.count(pid)) continue;
    became_traced(pid);
    if (!cgroup_) continue;
    std::vector<uprobes::Module> mods;
    try {
      mods = uprobes::process_modules(pid);
    } catch (const std::exception&) {
      continue;  // gone already, or a kernel thread
    }
    std::string unprobed;
    std::vector<uprobes::Selector> named;
    if (!opts_.select.empty()) named = uprobes::parse_selectors(opts_.select);
    for (const auto& m : mods) {
      const bool probed = std::any_of(plan_.modules.begin(), plan_.modules.end(),
                                      [&](const uprobes::Module& k) { return k.id == m.id; });
      const bool wanted = std::any_of(named.begin(), named.end(), [&](const uprobes::Selector& s) {
        return s.matches_module(m.name, m.path, m.is_main);
      });
      if (!probed && wanted)
        unprobed += (unprobed.empty() ? "" : ", ") + uprobes::seen_path(m.path);
    }
    if (unprobed.empty()) continue;
    status_.clear();  // the line is refreshed at the next wake-up
    base::progress(
        "process %s started in the cgroup: traced, but %s not probed (no "
        "process of the cgroup had it when atrace started; a selector naming the "
        "file by path probes it from the start)",
        describe_process(pid).c_str(), unprobed.c_str());
  }
}

// The processes that exited while atrace attached leave the map (the
// programs did not see them exit: the recording would wait for them); a
// recording with none left has nothing to record.
void Recorder::forget_gone() {
  std::vector<const Target*> targets{run_.target.get()};
  for (const auto& t : run_.others) targets.push_back(&t);
  std::string gone;
  for (const Target* t : targets) {
    if (!t->exited()) continue;
    bpf_->untrace(t->pid());
    traced_.erase(t->pid());
    gone += (gone.empty() ? "" : ", ") + std::to_string(t->pid());
  }
  if (gone.empty()) return;
  if (traced_.empty())
    throw RecordError("process " + gone + " exited while atrace attached: nothing to record");
  base::progress("process %s exited while atrace attached", gone.c_str());
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

}  // namespace

RecordResult record(const RecordOptions& opts, StopSignals& stop, EventSink* sink) {
  return Recorder(opts, stop, sink).run();
}

}  // namespace atrace
