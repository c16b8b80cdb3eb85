#include "userspace/recorder.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <signal.h>
#include <sys/capability.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>

#include "bpf/atrace.h"
#include "bpf/atrace.skel.h"
#include "formats/trace_writer.h"
#include "uprobes/elf_symbols.h"
#include "uprobes/proc_maps.h"
#include "uprobes/resolve.h"
#include "uprobes/selector.h"
#include "userspace/attach.h"
#include "userspace/bpf_variants.h"
#include "userspace/calibrate.h"
#include "userspace/features.h"
#include "userspace/kernel_groups.h"
#include "userspace/output_file.h"
#include "userspace/relevance.h"
#include "uprobes/exclude_file.h"
#include "userspace/reorder.h"
#include "userspace/rings.h"
#include "userspace/status_line.h"
#include "userspace/stop_signals.h"
#include "userspace/thread_table.h"
#include "userspace/target.h"
#include "userspace/unwind_guard.h"
#include "userspace/uprobe_multi.h"
#include "userspace/usdt_attach.h"
#include "uprobes/usdt_select.h"

namespace atrace {

namespace {

// The timer drains every ring before it can fill: no probe hit produces
// records faster than this (a hit costs well over 0.25 us), so half a ring's
// fill time at that rate is a safe period. Programs never wake us.
constexpr double kMaxRecordsPerSecPerCpu = 4e6;
// + the ring's own header; kernel events are larger records.
constexpr size_t kRingRecordBytes = sizeof(atrace_rec_hdr) + 8;
constexpr size_t kRingKernelRecordBytes = sizeof(atrace_rec_args) + 8;
constexpr uint64_t kMaxDrainPeriodNs = 50'000'000;
constexpr uint64_t kMinDrainPeriodNs = 1'000'000;
constexpr uint64_t kReorderWindowNs = 20'000'000;  // see reorder.h
constexpr int kLostSlots = ATRACE_LOST_SLOTS;

uint64_t now_ns(clockid_t clock) {
  struct timespec ts {};
  clock_gettime(clock, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}


bool g_verbose = false;
int libbpf_print(enum libbpf_print_level level, const char* fmt, va_list args) {
  if (!g_verbose && level != LIBBPF_WARN) return 0;
  if (!g_verbose) return 0;  // libbpf's own warnings become our one-line errors
  return vfprintf(stderr, fmt, args);
}

// Root, or at least the capabilities BPF uprobes need.
bool has_tracing_privileges() {
  if (geteuid() == 0) return true;
  cap_t caps = cap_get_proc();
  if (!caps) return false;
  cap_flag_value_t bpf = CAP_CLEAR, perfmon = CAP_CLEAR;
  cap_get_flag(caps, CAP_BPF, CAP_EFFECTIVE, &bpf);
  cap_get_flag(caps, CAP_PERFMON, CAP_EFFECTIVE, &perfmon);
  cap_free(caps);
  return bpf == CAP_SET && perfmon == CAP_SET;
}

std::string hostname() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& a : v) s += (s.empty() ? "" : " ") + a;
  return s;
}

struct SkelDeleter {
  void operator()(atrace_bpf* s) const { atrace_bpf::destroy(s); }
};

std::string text_of(const char* s, size_t max) { return std::string(s, strnlen(s, max)); }

class Recorder {
 public:
  Recorder(const RecordOptions& o, StopSignals& stop) : opts_(o), stop_(stop) {}
  RecordResult run();

 private:
  void load_modules();
  std::vector<uprobes::ProbeSite> resolve_sites(const KernelFeatures& f);
  void resolve_usdt_targets();
  void attach_usdt(UsdtProbes& usdt, std::vector<fmt::ProbeInfo>& table);
  void usdt_event(const void* data, size_t size, fmt::Event& ev);
  void load_bpf();
  void select_kernel_programs();
  bool traced_processes_left() const;
  void on_record(const void* data, size_t size);
  void drain_and_flush(uint64_t cutoff);
  std::vector<fmt::ProbeInfo> attach_functions(FunctionProbes& probes,
                                               const std::vector<uprobes::ProbeSite>& sites);
  void announce(const std::vector<fmt::ProbeInfo>& table, uint64_t attach_ns) const;
  void write_exclude_list(const std::vector<fmt::ProbeInfo>& detached) const;
  std::vector<uint64_t> probe_costs() const;
  std::vector<uint64_t> probe_floors() const;
  void record_until_stop(const Target& target, size_t nprobes, uint64_t start);
  void stop_if_signalled() const;
  void load_unwind_guard(const std::vector<uprobes::ProbeSite>& sites);
  void attach_unwind_guard(pid_t pid);
  fmt::LostCounts read_lost(std::string* by_kind = nullptr) const;

  const RecordOptions& opts_;
  StopSignals& stop_;
  KernelFeatures features_;
  std::unique_ptr<atrace_bpf, SkelDeleter> skel_;
  std::unique_ptr<PerCpuRings> rings_;
  // A run that fails before the header leaves no file (output_file.h).
  std::unique_ptr<OutputFile> output_;
  std::unique_ptr<fmt::TraceWriter> writer_;
  std::unique_ptr<ThreadTable> threads_;
  std::unique_ptr<RelevanceRun> relevance_;
  ProbeCost probe_cost_;
  CalibrationRecords calibration_records_;  // filled while calibrating only
  std::vector<uint32_t> keep_ids_;  // --filter-keep
  uint32_t max_id_ = 0;
  Reorderer reorder_;
  uint64_t events_ = 0;
  uint64_t last_event_ts_ = 0;
  bool use_multi_ = false;
  uint64_t drain_period_ns_ = kMaxDrainPeriodNs;
  int ncpus_ = 0;
  std::string exe_path_;
  std::vector<uprobes::Module> modules_;
  std::vector<uprobes::UsdtTarget> usdt_;
  std::map<uint32_t, const uprobes::UsdtTarget*> usdt_by_id_;
  std::unique_ptr<UnwindGuard> unwind_guard_;
  std::vector<uprobes::UnwindPoint> unwind_points_;
};

// The target's modules: a running process's mappings, or what a launched
// program's loader would load.
void Recorder::load_modules() {
  try {
    if (opts_.pid > 0) {
      modules_ = uprobes::process_modules(opts_.pid);
    } else {
      exe_path_ = uprobes::find_executable(opts_.command.at(0));
      modules_ = uprobes::launch_modules(exe_path_);
    }
  } catch (const uprobes::TargetError& e) {
    throw RecordError(e.what());
  }
}

// --usdt: ids after the functions'.
void Recorder::resolve_usdt_targets() {
  try {
    usdt_ = uprobes::resolve_usdt(uprobes::parse_usdt_specs(opts_.usdt), modules_, max_id_ + 1);
  } catch (const uprobes::SelectorError& e) {
    throw RecordError(e.what());
  } catch (const uprobes::ElfError& e) {
    throw RecordError(e.what());
  }
  for (const auto& t : usdt_) usdt_by_id_[t.id] = &t;
}

void Recorder::attach_usdt(UsdtProbes& usdt, std::vector<fmt::ProbeInfo>& table) {
  auto failures = usdt.attach(usdt_);
  if (usdt.attached().empty()) {
    if (table.empty())
      throw RecordError("no USDT probe could be attached (" + failures.front() + ")");
  } else if (!failures.empty()) {
    std::fprintf(stderr, "atrace: warning: %zu of %zu USDT probes could not be attached (first: %s)\n",
                 failures.size(), usdt_.size(), failures.front().c_str());
  }
  for (uint32_t id : usdt.attached()) {
    const uprobes::UsdtTarget& t = *usdt_by_id_.at(id);
    fmt::ProbeInfo p;
    p.id = t.id;
    p.kind = t.kind;
    p.name = t.display_name();
    p.module = t.module;
    p.path = t.path;
    p.address = t.sites.front().address;
    p.offset = t.sites.front().offset;
    p.path_kind = t.sites.front().path_kind;
    p.build_id = t.build_id;
    table.push_back(std::move(p));
  }
}

// A USDT record -> a Usdt event: integers at the size and sign the probe's
// note gives them, strings as the program read them.
void Recorder::usdt_event(const void* data, size_t size, fmt::Event& ev) {
  const auto* r = static_cast<const atrace_rec_usdt*>(data);
  ev.kind = fmt::EventKind::Usdt;
  ev.id = r->hdr.id;
  auto it = usdt_by_id_.find(ev.id);
  const std::vector<uprobes::UsdtArg>* specs =
      it != usdt_by_id_.end() ? &it->second->sites.front().arg_list : nullptr;
  const auto* rs = size >= sizeof(atrace_rec_usdt_str) && r->str_mask
                       ? static_cast<const atrace_rec_usdt_str*>(data)
                       : nullptr;
  const unsigned n = std::min<unsigned>(r->nargs, ATRACE_USDT_MAX_ARGS);
  ev.args.resize(n);
  unsigned slot = 0;
  for (unsigned i = 0; i < n; i++) {
    fmt::ProbeArg& a = ev.args[i];
    if (rs && (r->str_mask & (1u << i)) && slot < ATRACE_USDT_MAX_STRS) {
      a.is_string = true;
      a.size = 0;
      a.str = text_of(rs->str[slot++], ATRACE_USDT_STR_LEN);
      continue;
    }
    a.value = r->args[i];
    if (specs && i < specs->size()) {
      a.size = static_cast<uint8_t>((*specs)[i].size);
      a.is_signed = (*specs)[i].is_signed;
    }
    if (a.size < 8) {  // bpf_usdt_arg() already extended it to 64 bits
      a.value &= (uint64_t{1} << (8 * a.size)) - 1;
      if (a.is_signed && (a.value >> (8 * a.size - 1)) & 1) a.value |= ~uint64_t{0} << (8 * a.size);
    }
  }
}

std::vector<uprobes::ProbeSite> Recorder::resolve_sites(const KernelFeatures& f) {
  std::vector<uprobes::Selector> include, exclude;
  try {
    include = uprobes::parse_selectors(opts_.select);
    if (!opts_.exclude.empty()) exclude = uprobes::parse_selectors_with_files(opts_.exclude);
  } catch (const uprobes::SelectorError& e) {
    throw RecordError(e.what());
  }
  const std::vector<uprobes::Module>& modules = modules_;
  try {
    uprobes::ResolveOptions ro;
    ro.nop5_supported = f.uprobe_syscall;
    ro.move_probes = !opts_.probe_at_entry;
    uprobes::ResolveNotes notes;
    auto sites = uprobes::resolve_probe_sites(include, exclude, modules, ro, &notes);
    refuse_go_programs(sites);  // an error: before any status line
    for (const auto& line : notes.lines(include)) std::fprintf(stderr, "atrace: %s\n", line.c_str());
    for (const auto& site : sites) max_id_ = std::max(max_id_, site.id);
    if (!opts_.filter.keep.empty()) {
      // Same modules, same matching: a keep selector names functions the
      // way --select does (and one that matches nothing is an error).
      auto keep = uprobes::resolve_probe_sites(uprobes::parse_selectors(opts_.filter.keep), {},
                                               modules, ro);
      for (const auto& k : keep)
        for (const auto& site : sites)
          if (site.path == k.path && site.offset == k.offset) keep_ids_.push_back(site.id);
    }
    return sites;
  } catch (const uprobes::TargetError& e) {
    throw RecordError(e.what());
  } catch (const uprobes::SelectorError& e) {
    throw RecordError(e.what());
  } catch (const uprobes::ElfError& e) {
    throw RecordError(e.what());
  } catch (const UnwindGuardError& e) {
    throw RecordError(e.what());
  }
}

// Return probes made exception-safe (userspace/unwind_guard.h), loaded
// before the target is touched. Where the kernel cannot run the guard, a
// program with a C++ unwinder is refused; any other is traced with a
// warning (only pthread_exit and cancellation unwind it).
void Recorder::load_unwind_guard(const std::vector<uprobes::ProbeSite>& sites) {
  unwind_points_ = uprobes::find_unwind_points(modules_);
  try {
    UnwindGuardMaps maps;
    maps.rings = bpf_map__fd(skel_->maps.rings);
    maps.lost = bpf_map__fd(skel_->maps.lost);
    maps.traced_tgids = bpf_map__fd(skel_->maps.traced_tgids);
    unwind_guard_ = std::make_unique<UnwindGuard>(maps, sites, use_multi_);
  } catch (const UnwindGuardError& e) {
    for (const auto& p : unwind_points_)
      for (const auto& m : modules_)
        if (p.path == m.path && p.role == uprobes::UnwindRole::Start)
          throw RecordError(std::string(e.what()) + ": a C++ exception through a traced function of " +
                            m.name + " would abort it");
    std::fprintf(stderr,
                 "atrace: warning: return probes are not exception-safe here (%s): a thread "
                 "that calls pthread_exit or is cancelled inside a traced function will crash\n",
                 e.what());
  }
}

// Before any return probe and before atrace's thread-exit program.
void Recorder::attach_unwind_guard(pid_t pid) {
  if (!unwind_guard_) return;
  try {
    unwind_guard_->attach(unwind_points_, pid);
  } catch (const UnwindGuardError& e) {
    throw RecordError(e.what());
  }
}

void Recorder::load_bpf() {
  skel_.reset(atrace_bpf::open());
  if (!skel_) throw RecordError(std::string("cannot open BPF object: ") + std::strerror(errno));
  ncpus_ = libbpf_num_possible_cpus();
  if (ncpus_ <= 0 || ncpus_ > ATRACE_MAX_CPUS)
    throw RecordError("cannot determine the number of CPUs");
  size_t ring = ring_size_for(opts_.buffer_bytes);
  try {
    rings_ = std::make_unique<PerCpuRings>(ncpus_, ring);
  } catch (const std::exception& e) {
    if (errno == EPERM || errno == EACCES)
      throw RecordError("permission denied creating BPF maps: run atrace as root");
    throw RecordError(e.what());
  }
  bpf_map__set_max_entries(skel_->maps.rings, static_cast<__u32>(ncpus_));
  bpf_map__set_inner_map_fd(skel_->maps.rings, rings_->template_fd());
  const size_t record = opts_.kernel_groups ? kRingKernelRecordBytes : kRingRecordBytes;
  const double fill_s = static_cast<double>(ring / record) / kMaxRecordsPerSecPerCpu;
  drain_period_ns_ = std::clamp(static_cast<uint64_t>(fill_s / 2 * 1e9), kMinDrainPeriodNs,
                                kMaxDrainPeriodNs);
  select_kernel_programs();
  if (opts_.filter.active()) {
    // One slot per function id (dense from 1); the programs look nothing
    // up when filters are off.
    bpf_map__set_max_entries(skel_->maps.fn_state, max_id_ + 1);
    bpf_map__set_max_entries(skel_->maps.fn_stat, max_id_ + 1);
    skel_->rodata->filtering = true;
    skel_->rodata->filter_max_calls = opts_.filter.max_calls;
    if (opts_.filter.mode == FilterMode::Absolute) {
      skel_->rodata->filter_min_calls = opts_.filter.min_calls;
    }
  }
  if (use_multi_) {
    auto t = static_cast<enum bpf_attach_type>(kBpfTraceUprobeMulti);
    bpf_program__set_expected_attach_type(skel_->progs.func_entry, t);
    bpf_program__set_expected_attach_type(skel_->progs.func_exit, t);
  }
  if (int err = atrace_bpf::load(skel_.get()); err) {
    // As root, EACCES is the verifier refusing a program, not a permission.
    if ((err == -EPERM || err == -EACCES) && geteuid() != 0)
      throw RecordError("permission denied loading BPF programs: run atrace as root");
    if (err == -EACCES)
      throw RecordError("the kernel's BPF verifier refused atrace's programs (-v shows its log)");
    throw RecordError(std::string("cannot load BPF programs: ") + std::strerror(-err));
  }
  try {
    rings_->install(bpf_map__fd(skel_->maps.rings),
                    [this](const void* d, size_t n) { on_record(d, n); });
  } catch (const std::exception& e) {
    throw RecordError(e.what());
  }
  // What a probe hit costs here, on each entry path, measured on atrace's
  // own functions with these very programs: stored in the header for
  // `report --compensate`, used by the budget filter.
  CalibrationOptions co;
  co.multi = use_multi_;
  co.ring_bytes = ring;
  co.drain = [this] { rings_->drain(); };
  co.records = &calibration_records_;
  probe_cost_ = calibrate_probe_cost(skel_->progs.func_entry, skel_->progs.func_exit, co);
  calibration_records_ = {};
  if (opts_.verbose && !probe_cost_.error.empty())
    std::fprintf(stderr, "atrace: probe cost calibration: %s\n", probe_cost_.error.c_str());
}

// Only the tracepoints of the groups asked for are loaded (and so
// attached): a group left out costs nothing, not even its tgid lookup.
void Recorder::select_kernel_programs() {
  const unsigned g = opts_.kernel_groups;
  auto want = [](bpf_program* p, bool on) { bpf_program__set_autoload(p, on); };
  auto& p = skel_->progs;
  want(p.sched_switch, g & kKernelSched);
  want(p.sched_wakeup, g & kKernelSched);
  want(p.sched_wakeup_new, g & kKernelSched);
  want(p.sched_migrate, g & kKernelSched);
  want(p.sys_enter, g & kKernelSyscalls);
  want(p.sys_exit, g & kKernelSyscalls);
  want(p.page_fault_user, g & kKernelFaults);
  want(p.sched_process_fork, (g & kKernelProc) || opts_.follow_forks);
  // A launched target's events start at its exec, which this program sees.
  want(p.sched_process_exec, (g & kKernelProc) || opts_.pid <= 0);
  want(p.task_rename, g & kKernelProc);
  skel_->rodata->want_proc = (g & kKernelProc) != 0;
  skel_->rodata->follow_forks = opts_.follow_forks;
  skel_->rodata->filter_functions = opts_.follow_forks;
  adapt_to_kernel(skel_.get(), features_);
}

namespace {
// A record's text field: NUL-terminated within its array, or cut there.
}  // namespace

void Recorder::on_record(const void* data, size_t size) {
  if (size < sizeof(atrace_rec_hdr)) return;
  const auto* h = static_cast<const atrace_rec_hdr*>(data);
  // The calibration's hits on atrace's own functions (load_bpf).
  if (h->kind <= ATRACE_REC_FUNC_EXIT && is_calibration_probe(h->id)) {
    calibration_records_.add(h->id, h->kind == ATRACE_REC_FUNC_ENTRY, h->ts);
    return;
  }
  fmt::Event ev;
  ev.ts = h->ts;
  ev.pid = h->tgid;
  ev.tid = h->tid;
  ev.cpu = h->cpu;
  switch (h->kind) {
    case ATRACE_REC_FUNC_ENTRY:
    case ATRACE_REC_FUNC_EXIT:
      ev.kind = h->kind == ATRACE_REC_FUNC_ENTRY ? fmt::EventKind::FuncEntry
                                                 : fmt::EventKind::FuncExit;
      ev.id = h->id;
      threads_->saw(ev);
      break;
    case ATRACE_REC_THREAD_EXIT:
    case ATRACE_REC_COMM: {
      if (size < sizeof(atrace_rec_comm)) return;
      ev.kind = h->kind == ATRACE_REC_COMM ? fmt::EventKind::Comm : fmt::EventKind::ThreadExit;
      std::string name = text_of(static_cast<const atrace_rec_comm*>(data)->comm, ATRACE_COMM_LEN);
      threads_->named(ev, name);
      if (ev.kind == fmt::EventKind::Comm) ev.text = std::move(name);
      break;
    }
    case ATRACE_REC_USDT:
      if (size < sizeof(atrace_rec_usdt)) return;
      usdt_event(data, size, ev);
      threads_->saw(ev);
      break;
    case ATRACE_REC_UNWIND: {
      if (size < sizeof(atrace_rec_args)) return;
      ev.kind = fmt::EventKind::Unwind;
      ev.id = h->id;
      ev.flags = static_cast<uint8_t>(static_cast<const atrace_rec_args*>(data)->arg0);
      threads_->saw(ev);
      break;
    }
    case ATRACE_REC_FILTER_HINT:
      if (relevance_) relevance_->hint();
      return;
    case ATRACE_REC_EXEC:
      if (size < sizeof(atrace_rec_exec)) return;
      ev.kind = fmt::EventKind::ProcExec;
      ev.text = text_of(static_cast<const atrace_rec_exec*>(data)->filename, ATRACE_PATH_LEN);
      threads_->saw(ev);
      break;
    default: {
      // The numeric kernel kinds share one layout and the file's numbers.
      if (h->kind < ATRACE_REC_SWITCH_OUT || h->kind > ATRACE_REC_PROC_EXIT) return;
      if (size < sizeof(atrace_rec_args)) return;
      const auto* a = static_cast<const atrace_rec_args*>(data);
      ev.kind = static_cast<fmt::EventKind>(h->kind);
      ev.flags = static_cast<uint8_t>(h->id);
      ev.arg0 = a->arg0;
      ev.arg1 = a->arg1;
      threads_->saw(ev);
      break;
    }
  }
  last_event_ts_ = std::max(last_event_ts_, ev.ts);
  reorder_.push(std::move(ev));
  ++events_;
}

void Recorder::drain_and_flush(uint64_t cutoff) {
  rings_->drain();
  // Called even with nothing to write: the writer flushes blocks by age.
  writer_->write_events(reorder_.take_until(cutoff));
}

fmt::LostCounts Recorder::read_lost(std::string* by_kind) const {
  fmt::LostCounts lost;
  lost.per_cpu.assign(static_cast<size_t>(ncpus_), 0);
  if (!skel_) return lost;
  std::vector<uint64_t> values(static_cast<size_t>(ncpus_));
  for (__u32 k = 0; k < kLostSlots; ++k) {
    if (bpf_map_lookup_elem(bpf_map__fd(skel_->maps.lost), &k, values.data()) != 0) continue;
    uint64_t kind_total = 0;
    for (int c = 0; c < ncpus_; ++c) {
      lost.per_cpu[static_cast<size_t>(c)] += values[static_cast<size_t>(c)];
      kind_total += values[static_cast<size_t>(c)];
    }
    if (by_kind && kind_total)
      *by_kind += (by_kind->empty() ? "" : ", ") + std::to_string(kind_total) + " " +
                  fmt::to_string(static_cast<fmt::EventKind>(k));
  }
  return lost;
}

// --follow-forks: the programs remove a process from the map when its last
// thread exits; the recording is over when none is left.
bool Recorder::traced_processes_left() const {
  __u32 key = 0;
  return bpf_map_get_next_key(bpf_map__fd(skel_->maps.traced_tgids), nullptr, &key) == 0;
}

std::vector<fmt::ProbeInfo> Recorder::attach_functions(FunctionProbes& probes,
                                                       const std::vector<uprobes::ProbeSite>& sites) {
  // Sites the kernel would refuse are reported, not attached: in launch mode
  // the kernel's refusal would be silent (uprobes/insn_class.h).
  std::vector<uprobes::ProbeSite> attachable;
  std::vector<const uprobes::ProbeSite*> refused;
  for (const auto& s : sites) {
    if (s.entry_path == fmt::ProbePath::Refused) refused.push_back(&s);
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
  auto failures = probes.attach(attachable);
  std::map<uint32_t, const AttachFailure*> failed;
  for (const auto& f : failures) failed[f.site->id] = &f;
  std::vector<fmt::ProbeInfo> table;
  for (const auto& s : attachable) {
    if (failed.count(s.id)) continue;
    fmt::ProbeInfo p;
    p.id = s.id;
    p.name = s.name;
    p.module = s.module;
    p.path = s.path;
    p.address = s.address;
    p.offset = s.offset;
    p.path_kind = s.entry_path;
    p.build_id = s.build_id;
    p.entry_delta = s.entry_delta;
    table.push_back(std::move(p));
  }
  if (failures.empty()) return table;
  const AttachFailure& first = failures.front();
  std::string what = first.site->name + " in " + first.site->module + ": " + first.reason;
  if (table.empty()) {
    if (first.error == EPERM || first.error == EACCES)
      throw RecordError("permission denied attaching uprobes: run atrace as root");
    throw RecordError("no probe could be attached (" + what + ")");
  }
  std::fprintf(stderr, "atrace: warning: %zu of %zu functions could not be probed (first: %s)\n",
               failures.size(), attachable.size(), what.c_str());
  return table;
}

// One line saying what a probe hit will cost: the path of each entry probe
// is the main factor (kernel-notes/emulated-vs-single-step.md).
void Recorder::announce(const std::vector<fmt::ProbeInfo>& table, uint64_t attach_ns) const {
  size_t n[5] = {}, functions = 0, moved = 0;
  for (const auto& p : table) {
    ++n[static_cast<size_t>(p.path_kind) % 5];
    functions += p.kind == fmt::ProbeKind::Function;
    moved += p.entry_delta > 0;
  }
  std::string paths;
  auto add = [&](fmt::ProbePath p, const char* what) {
    size_t k = n[static_cast<size_t>(p)];
    if (k) paths += (paths.empty() ? "" : ", ") + std::to_string(k) + " " + what;
  };
  add(fmt::ProbePath::Nop5, "nop5 (optimized)");
  add(fmt::ProbePath::Emulated, "emulated");
  add(fmt::ProbePath::SingleStep, "single-stepped (slowest)");
  add(fmt::ProbePath::Unknown, "unknown");
  if (moved)  // uprobes/placement.h; `atrace list` and `info` show each
    paths += " (" + std::to_string(moved) + " past the first instruction, where it is cheaper)";
  // What the probes are, how each will be run, and what attaching took
  // (bench/attach_time.sh reads the last figure).
  std::string what = std::to_string(functions) + " functions";
  if (functions < table.size())
    what += (functions ? " and " : "") + std::to_string(table.size() - functions) + " USDT probes";
  if (!functions) what = std::to_string(table.size()) + " USDT probes";
  std::fprintf(stderr, "atrace: probing %s: %s; %s; attached in %.1f ms\n", what.c_str(),
               paths.c_str(), use_multi_ ? "uprobe_multi links" : "perf-event links",
               static_cast<double>(attach_ns) / 1e6);
  // What the kernel groups cost the traced calls (kernel_groups.h).
  const unsigned g = opts_.kernel_groups;
  if (g & kKernelSyscalls)
    std::fprintf(stderr,
                 "atrace: kernel events: %s; recording system calls adds about 0.5 us to each "
                 "traced call and 0.3 us to every system call of the machine\n",
                 kernel_groups_string(g).c_str());
  else if (g)
    std::fprintf(stderr,
                 "atrace: kernel events: %s (no cost per traced call); system calls are "
                 "not recorded: --kernel=+syscalls adds them (about +0.5 us a traced call)\n",
                 kernel_groups_string(g).c_str());
}

// ns per traced call by entry path (index = fmt::ProbePath) for the budget
// rule: calibrated, or this machine's typical numbers where calibration
// could not measure (docs/BENCHMARKS.md).
std::vector<uint64_t> Recorder::probe_costs() const {
  auto or_default = [](uint64_t v, uint64_t d) { return v ? v : d; };
  uint64_t emulated = or_default(probe_cost_.emulated_ns, 1000);
  return {emulated, or_default(probe_cost_.single_step_ns, 15000), emulated,
          or_default(probe_cost_.nop5_ns, 650), 0};
}

// What a probe adds to a call's measured duration, by entry path: the
// calibrated inside cost (calibrate.h), which the filters take off each
// mean before comparing it with their threshold. Where it was not measured,
// half the calibrated cost: taking off less than the truth keeps the filter
// conservative (a function is judged longer than it is, never shorter).
std::vector<uint64_t> Recorder::probe_floors() const {
  std::vector<uint64_t> f = probe_costs();
  const uint64_t inside[] = {probe_cost_.emulated_inside_ns, probe_cost_.single_step_inside_ns,
                             probe_cost_.emulated_inside_ns, probe_cost_.nop5_inside_ns, 0};
  for (size_t p = 0; p < f.size(); ++p) f[p] = inside[p] ? inside[p] : f[p] / 2;
  return f;
}

// OUTPUT.exclude: the detached functions, for `--exclude=@OUTPUT.exclude`
// in a later run (nothing when none was detached, or the trace went to
// stdout).
void Recorder::write_exclude_list(const std::vector<fmt::ProbeInfo>& detached) const {
  if (detached.empty() || opts_.output == "-") return;
  std::string path = opts_.output + ".exclude";
  std::string exe = exe_path_;
  if (exe.empty() && opts_.pid > 0) {
    char buf[4096];
    ssize_t n = readlink(("/proc/" + std::to_string(opts_.pid) + "/exe").c_str(), buf, sizeof buf - 1);
    if (n > 0) exe.assign(buf, static_cast<size_t>(n));
  }
  const std::string main_module = exe.substr(exe.rfind('/') + 1);
  try {
    // Created like the trace (output_file.h): private, never through a link.
    OutputFile file(path);
    file.write(uprobes::exclude_file_text(
        detached, main_module,
        "functions detached by atrace's relevance filters while recording " + opts_.output +
            "\nuse: atrace record --exclude=@" + path + " ..."));
    file.commit();
    std::fprintf(stderr, "atrace: %zu detached function(s) listed in %s\n", detached.size(), path.c_str());
  } catch (const OutputError& e) {
    std::fprintf(stderr, "atrace: warning: %s\n", e.what());
  }
}

// Before the target is released, a stop signal ends the run (stop_signals.h).
void Recorder::stop_if_signalled() const {
  const int sig = stop_.take();
  if (!sig) return;
  std::string what = std::string("interrupted by ") + stop_signal_name(sig) +
                     " before the recording started: nothing recorded";
  if (opts_.pid <= 0) what += ", " + opts_.command.at(0) + " not started";
  throw RecordInterrupted(sig, what);
}

// Drains on a timer until a signal, the
// target's exit or the --duration deadline.
void Recorder::record_until_stop(const Target& target, size_t nprobes, uint64_t start) {
  UniqueFd timer(timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC));
  struct itimerspec its {};
  its.it_interval.tv_nsec = static_cast<long>(drain_period_ns_);
  its.it_value.tv_nsec = static_cast<long>(drain_period_ns_);
  timerfd_settime(timer.get(), 0, &its, nullptr);

  UniqueFd ep(epoll_create1(EPOLL_CLOEXEC));
  auto watch = [&](int fd, uint64_t tag) {
    struct epoll_event e {};
    e.events = EPOLLIN;
    e.data.u64 = tag;
    epoll_ctl(ep.get(), EPOLL_CTL_ADD, fd, &e);
  };
  enum : uint64_t { kRings, kSignal, kTarget, kTimer };
  watch(rings_->epoll_fd(), kRings);
  watch(stop_.fd(), kSignal);
  watch(target.pidfd(), kTarget);
  watch(timer.get(), kTimer);

  StatusLine status;
  const uint64_t deadline =
      opts_.duration_s > 0 ? start + static_cast<uint64_t>(opts_.duration_s * 1e9) : UINT64_MAX;
  bool stop = false, target_gone = false;
  while (!stop) {
    struct epoll_event evs[4];
    int n = epoll_wait(ep.get(), evs, 4, -1);
    if (n < 0 && errno != EINTR) throw RecordError(std::string("epoll: ") + std::strerror(errno));
    for (int i = 0; i < n; ++i) {
      switch (evs[i].data.u64) {
        case kSignal:
          stop = stop_.take() != 0;
          break;
        case kTarget:
          // Followed children may outlive the first process.
          if (!opts_.follow_forks) stop = true;
          target_gone = true;
          break;
        case kTimer: {
          uint64_t ticks;
          (void)!read(timer.get(), &ticks, sizeof ticks);
          break;
        }
        default: break;
      }
    }
    uint64_t now = now_ns(CLOCK_MONOTONIC);
    if (now >= deadline) stop = true;
    if (target_gone && opts_.follow_forks && !traced_processes_left()) stop = true;
    if (relevance_) {
      rings_->drain();  // hints first, then the decisions
      for (auto& ev : relevance_->tick(now)) reorder_.push(std::move(ev));
    }
    drain_and_flush(now > kReorderWindowNs ? now - kReorderWindowNs : 0);
    // The loss counters cost a map read per kind: only for a visible line.
    if (status.enabled())
      status.show(nprobes, events_, read_lost().total(), static_cast<double>(now - start) / 1e9);
  }

  status.clear();
}

RecordResult Recorder::run() {
  g_verbose = opts_.verbose;
  libbpf_set_print(libbpf_print);
  // Kernel events alone are a recording too (like perf trace); nothing at
  // all is not.
  if (opts_.select.empty() && opts_.usdt.empty() && !opts_.kernel_groups)
    throw RecordError("nothing to record: give --select=PATTERNS or --usdt=SPECS, or drop --no-kernel");
  try {
    check_output_path(opts_.output);  // a bad -o first, before any work
  } catch (const OutputError& e) {
    throw RecordError(e.what());
  }
  if (!has_tracing_privileges())
    throw RecordError("recording needs root (CAP_BPF and CAP_PERFMON): run atrace record as root");
  features_ = detect_kernel_features();
  const KernelFeatures& features = features_;
  if (auto missing = features.missing_requirement(); !missing.empty()) throw RecordError(missing);
  if (opts_.verbose) print_kernel_features(stderr, features);

  // Everything that can fail on the user's input fails before the target
  // is touched.
  std::vector<uprobes::ProbeSite> sites;
  if (!opts_.select.empty() || !opts_.usdt.empty()) load_modules();
  if (!opts_.select.empty()) sites = resolve_sites(features);
  if (!opts_.usdt.empty()) resolve_usdt_targets();
  if (opts_.select.empty() && opts_.usdt.empty() && opts_.pid <= 0) {
    try {
      exe_path_ = uprobes::find_executable(opts_.command.at(0));
    } catch (const uprobes::TargetError& e) {
      throw RecordError(e.what());
    }
  }
  stop_if_signalled();
  // A reader that goes away (record -o - | head) is a write error, not a kill.
  signal(SIGPIPE, SIG_IGN);
  std::unique_ptr<Target> target;
  if (opts_.pid > 0) {
    try {
      target = std::make_unique<Target>(Target::attach(opts_.pid));
    } catch (const TargetError& e) {
      throw RecordError(e.what());
    }
  }
  try {
    output_ = std::make_unique<OutputFile>(opts_.output);
    writer_ = std::make_unique<fmt::TraceWriter>(output_->dup_fd(), output_->display());
  } catch (const std::exception& e) {
    throw RecordError(e.what());
  }
  if (opts_.attach_mode == "multi" && !features.uprobe_multi)
    throw RecordError("kernel " + features.release + " has no uprobe_multi links (Linux 6.6+)");
  use_multi_ = opts_.attach_mode == "multi" || (opts_.attach_mode == "auto" && features.uprobe_multi);
  load_bpf();
  if (!sites.empty()) load_unwind_guard(sites);

  stop_if_signalled();

  if (!target) {
    // Until the child's execve, it runs atrace's code: none of it is the
    // target's (the exec program clears the flag).
    skel_->bss->before_exec = true;
    try {
      target = std::make_unique<Target>(Target::launch_held(exe_path_, opts_.command, opts_.output == "-",
                                                                stop_.inherited_ignored()));
    } catch (const TargetError& e) {
      throw RecordError(e.what());
    }
  }
  const pid_t pid = target->pid();
  threads_ = std::make_unique<ThreadTable>();
  __u32 tgid = static_cast<__u32>(pid);
  __u8 one = 1;
  bpf_map_update_elem(bpf_map__fd(skel_->maps.traced_tgids), &tgid, &one, BPF_ANY);
  attach_unwind_guard(opts_.follow_forks ? -1 : pid);
  if (int err = atrace_bpf::attach(skel_.get()); err || !thread_exit_attached(skel_.get()))
    throw RecordError(std::string("cannot attach the kernel tracepoints: ") +
                      std::strerror(err ? -err : errno));

  fmt::TraceHeader header;
  header.atrace_version = ATRACE_VERSION;
  header.command_line = opts_.atrace_command_line;
  header.target_pid = static_cast<uint32_t>(pid);
  header.host = hostname();
  header.kernel = features.release;
  header.clock_id = CLOCK_MONOTONIC;
  header.kernel_events = kernel_groups_string(opts_.kernel_groups);
  header.probe_cost_nop5_ns = probe_cost_.nop5_ns;
  header.probe_cost_emulated_ns = probe_cost_.emulated_ns;
  header.probe_inside_nop5_ns = probe_cost_.nop5_inside_ns;
  header.probe_inside_emulated_ns = probe_cost_.emulated_inside_ns;
  header.probe_inside_singlestep_ns = probe_cost_.single_step_inside_ns;
  header.probe_cost_singlestep_ns = probe_cost_.single_step_ns;
  header.kernel_limits = features.limits();

  // Followed children need the probes in every process that maps the
  // module; the programs then keep only traced processes' hits.
  FunctionProbes probes(skel_->progs.func_entry, skel_->progs.func_exit,
                        opts_.follow_forks ? -1 : pid, use_multi_);
  // Each function's filter state is set before any probe fires: the
  // programs turn functions off on their own (max-calls, threshold), never
  // a kept one, and judge a mean against the threshold plus its path's
  // share of the probe cost.
  if (opts_.filter.active()) {
    const auto floor = probe_floors();
    for (const auto& site : sites) {
      atrace_fn_state st{};
      st.keep = std::find(keep_ids_.begin(), keep_ids_.end(), site.id) != keep_ids_.end();
      if (opts_.filter.mode == FilterMode::Absolute)
        st.limit_ns = opts_.filter.threshold_ns + floor[static_cast<size_t>(site.entry_path) % floor.size()];
      bpf_map_update_elem(bpf_map__fd(skel_->maps.fn_state), &site.id, &st, BPF_ANY);
    }
  }
  std::vector<fmt::ProbeInfo> table;
  const uint64_t attach_start = now_ns(CLOCK_MONOTONIC);
  if (!sites.empty()) table = attach_functions(probes, sites);
  UsdtProbes usdt(skel_->progs.usdt_hit, usdt_string_program(skel_.get(), features),
                  opts_.follow_forks ? -1 : pid);
  if (!usdt_.empty()) attach_usdt(usdt, table);
  if (!table.empty()) announce(table, now_ns(CLOCK_MONOTONIC) - attach_start);
  // The filters judge functions only: USDT probes are the program's own
  // choice of what matters.
  std::vector<fmt::ProbeInfo> functions;
  for (const auto& p : table)
    if (p.kind == fmt::ProbeKind::Function) functions.push_back(p);
  if (opts_.filter.active() && !functions.empty()) {
    try {
      relevance_ = std::make_unique<RelevanceRun>(
          opts_.filter, probes, bpf_map__fd(skel_->maps.fn_state), bpf_map__fd(skel_->maps.fn_stat),
          ncpus_, pid, functions, keep_ids_, probe_floors(), probe_costs());
    } catch (const std::exception& e) {
      throw RecordError(std::string("relevance filters: ") + e.what());
    }
  }

  header.start_mono_ns = now_ns(CLOCK_MONOTONIC);
  header.start_real_ns = now_ns(CLOCK_REALTIME);
  stop_if_signalled();  // the last moment a launched target can be left unstarted
  if (target->launched()) {
    header.target_command = join(opts_.command);
    try {
      target->release();
    } catch (const TargetError& e) {
      throw RecordError(e.what());
    }
  } else {
    header.target_command = target->command_line();
  }
  RecordResult r;
  // A write error (disk full, reader gone) stops the recording at once and
  // is said at once; the teardown below then writes nothing more.
  auto writing = [&](const auto& write) {
    if (!r.write_error.empty()) return;
    try {
      write();
    } catch (const fmt::WriteError& e) {
      r.write_error = e.what();
      std::fprintf(stderr, "atrace: %s: recording stopped\n", e.what());
    }
  };
  writing([&] {
    writer_->write_header(header);
    writer_->write_probes(table);
  });
  if (r.write_error.empty()) {
    try {
      output_->commit();
    } catch (const OutputError& e) {
      throw RecordError(e.what());
    }
  }
  writing([&] { record_until_stop(*target, table.size(), header.start_mono_ns); });

  // The recording ends now: no call starts from here on, and the calls in
  // flight that return while the probes are being detached still close
  // (bpf/atrace.bpf.c, stop_gate); detaching takes a grace period or two.
  skel_->bss->stopping = true;
  header.end_mono_ns = now_ns(CLOCK_MONOTONIC);
  header.end_real_ns = now_ns(CLOCK_REALTIME);
  std::vector<fmt::ProbeInfo> detached;
  if (relevance_) {
    relevance_->finish();
    detached = relevance_->detached();
    if (auto line = relevance_->summary(); !line.empty())
      std::fprintf(stderr, "atrace: %s\n", line.c_str());
    relevance_.reset();
  }
  // Stop: returns, then entries (attach.h), then everything in flight.
  const uint64_t detach_start = now_ns(CLOCK_MONOTONIC);
  probes.detach_all();
  usdt.detach_all();
  if (opts_.verbose && !table.empty())
    std::fprintf(stderr, "atrace: detached %zu probes in %.1f ms\n", table.size(),
                 static_cast<double>(now_ns(CLOCK_MONOTONIC) - detach_start) / 1e6);
  if (!target->exited()) threads_->refresh_names();
  rings_->drain();
  auto rest = reorder_.take_all();
  if (!rest.empty()) writing([&] { writer_->write_events(rest); });
  // Exits of calls in flight at the stop come after it.
  header.end_mono_ns = std::max(header.end_mono_ns, last_event_ts_);

  fmt::LostCounts lost = read_lost(&r.lost_by_kind);
  writing([&] { writer_->finish(header, threads_->table(), lost); });
  // After a write error the disk or pipe is gone: one message said so.
  if (r.write_error.empty()) write_exclude_list(detached);

  r.events = events_;
  r.lost = lost.total();
  r.probes = table.size();
  // Nothing of atrace's stays in the kernel while a launched target is
  // waited for.
  unwind_guard_.reset();
  rings_.reset();
  skel_.reset();
  // A launched target is left to finish (stop signals are passed on to
  // it), then its status is passed on.
  r.exit_status = wait_passing_signals(*target, stop_);
  return r;
}

}  // namespace

RecordResult record(const RecordOptions& opts, StopSignals& stop) {
  return Recorder(opts, stop).run();
}

}  // namespace atrace
