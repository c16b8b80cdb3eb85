#include "record/bpf_session.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <future>
#include <memory>
#include <vector>

#include "base/capabilities.h"
#include "base/diagnostics.h"
#include "base/unique_fd.h"
#include "bpf/atrace.h"
#include "bpf/atrace.skel.h"
#include "record/bpf_variants.h"
#include "record/func_values.h"
#include "record/kernel_groups.h"
#include "record/kill_bound.h"
#include "record/record_error.h"
#include "record/uprobe_multi.h"

namespace atrace {

namespace {

// The timer drains every ring before it can fill: no probe hit produces
// records faster than this (a hit costs well over 0.25 us), so half a ring's
// fill time at that rate is a safe period. Programs never wake us.
constexpr double kMaxRecordsPerSecPerCpu = 4e6;
// + the ring's own header; kernel events are larger records.
constexpr size_t kRingRecordBytes = sizeof(atrace_rec_hdr) + 8;
constexpr size_t kRingKernelRecordBytes = sizeof(atrace_rec_args) + 8;
// The net group's messages are larger still (a program-heavy workload of
// small messages fills the rings with them).
constexpr size_t kRingNetRecordBytes = sizeof(atrace_rec_net) + 8;
constexpr uint64_t kMinDrainPeriodNs = 1'000'000;
constexpr int kLostSlots = ATRACE_LOST_SLOTS;
// Distinct USDT argument specs on uprobe_multi links (a probe's sites with
// the same locations share one): 208 bytes each, preallocated. libbpf's
// own default is 256.
constexpr uint32_t kUsdtSpecCapacity = 1024;

}  // namespace

std::string bpf_programs_id() {
  size_t size = 0;
  const auto* bytes = static_cast<const unsigned char*>(atrace_bpf__elf_bytes(&size));
  uint64_t h = 14695981039346656037ull;  // FNV-1a
  for (size_t i = 0; i < size; ++i) h = (h ^ bytes[i]) * 1099511628211ull;
  char text[24];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(h));
  return text;
}

void BpfSession::SkelDeleter::operator()(atrace_bpf* s) const { atrace_bpf::destroy(s); }

BpfSession::BpfSession(const BpfSettings& s, const KernelFeatures& f, const Alongside& alongside)
    : multi_(s.multi), verbose_(s.verbose), features_(f) {
  skel_.reset(atrace_bpf::open());
  if (!skel_) throw RecordError(std::string("cannot open BPF object: ") + base::errno_text(errno));
  ncpus_ = libbpf_num_possible_cpus();
  if (ncpus_ <= 0 || ncpus_ > ATRACE_MAX_CPUS)
    throw RecordError("cannot determine the number of CPUs");
  // The plain function entries and exits go through the lanes, the rest
  // through the rings: with function probes, a lane gets the buffer size
  // (the same room for calls as a ring had before lanes) and a ring half.
  const bool lanes = s.max_id > 0;
  ring_bytes_ = ring_size_for(lanes ? s.buffer_bytes / 2 : s.buffer_bytes);
  if (lanes)
    lane_slots_ = static_cast<uint32_t>(ring_size_for(s.buffer_bytes) / sizeof(atrace_lane_slot));
  try {
    rings_ = std::make_unique<PerCpuRings>(ncpus_, ring_bytes_);
  } catch (const RecordError&) {
    // The rings' own message, unless the cause is one the user fixes with
    // capabilities.
    if ((errno == EPERM || errno == EACCES) && !can_trace())
      throw RecordError(tracing_privilege_error("record"));
    throw;
  }
  bpf_map__set_max_entries(skel_->maps.rings, static_cast<__u32>(ncpus_));
  if (lane_slots_) {
    skel_->rodata->lane_slots = lane_slots_;
    bpf_map__set_max_entries(skel_->maps.lane_ctl, static_cast<__u32>(ncpus_));
    bpf_map__set_max_entries(skel_->maps.lane_data, static_cast<__u32>(ncpus_) * lane_slots_);
  }
  bpf_map__set_inner_map_fd(skel_->maps.rings, rings_->template_fd());
  const size_t record = (s.kernel_groups & kKernelNet) ? kRingNetRecordBytes
                        : s.kernel_groups              ? kRingKernelRecordBytes
                                                       : kRingRecordBytes;
  const double fill_s = static_cast<double>(ring_bytes_ / record) / kMaxRecordsPerSecPerCpu;
  drain_period_ns_ =
      std::clamp(static_cast<uint64_t>(fill_s / 2 * 1e9), kMinDrainPeriodNs, kMaxDrainPeriodNs);
  select_probe_programs(s);
  select_kernel_programs(s, f);
  select_value_programs(s, f);
  select_stack_program(s);
  // The maps made before the load let the slow parts of the start run
  // alongside the verifier: the other object's load, and the rings'
  // install (the kernel waits for a grace period after updating a map of
  // maps). Both kinds of buffer hand their records to whatever handler_
  // is now (start()): the calibration's, then the recording's.
  create_shared_maps();
  std::future<void> other, rings_in;
  if (alongside) other = std::async(std::launch::async, alongside, shared_maps());
  rings_in = std::async(std::launch::async, [this, outer = bpf_map__fd(skel_->maps.rings)] {
    rings_->install(outer, [this](const void* d, size_t n) {
      if (handler_) handler_(d, n);
    });
  });
  try {
    load(s);
  } catch (...) {
    // Their objects go with this session; the load's error is the one said.
    for (auto* pending : {&other, &rings_in})
      if (pending->valid()) pending->wait();
    throw;
  }
  // Their errors, after the load's (rings_in's first: the guard needs no
  // rings to be said to fail).
  rings_in.get();
  if (other.valid()) other.get();
  if (lane_slots_)
    lanes_ = std::make_unique<SlotLanes>(bpf_map__fd(skel_->maps.lane_ctl),
                                         bpf_map__fd(skel_->maps.lane_data), ncpus_, lane_slots_);
  fill_values(s);
  if (s.multi)
    usdt_specs_ = std::make_unique<UsdtSpecTable>(bpf_map__fd(skel_->maps.__bpf_usdt_specs),
                                                  kUsdtSpecCapacity);
}

// The maps another object shares (SharedMapFds), created from their
// definitions before the load, which then reuses them: so they exist
// while this object is still being verified.
void BpfSession::create_shared_maps() {
  auto& m = skel_->maps;
  // A task-storage map needs its key and value types in BTF the kernel
  // holds: that of a twin of the object, opened apart (reading the raw
  // BTF of this one's would change what libbpf later loads with its
  // programs: the verifier then refused libbpf's own USDT functions),
  // kept by the kernel for as long as the map.
  std::unique_ptr<btf, decltype(&btf__free)> types(nullptr, &btf__free);
  size_t elf_size = 0;
  const void* elf = atrace_bpf__elf_bytes(&elf_size);
  std::unique_ptr<bpf_object, decltype(&bpf_object__close)> twin(
      bpf_object__open_mem(elf, elf_size, nullptr), &bpf_object__close);
  if (twin && libbpf_get_error(twin.get()) != 0) twin.release();
  if (const btf* own = twin ? bpf_object__btf(twin.get()) : nullptr) {
    uint32_t size = 0;
    const void* raw = btf__raw_data(own, &size);
    types.reset(btf__new(raw, size));
    if (types && btf__load_into_kernel(types.get()) != 0) types.reset();
  }
  for (bpf_map* map :
       {m.rings, m.lost, m.traced_tgids, m.thread_lost, m.lossy_threads, m.unwind_states}) {
    LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = bpf_map__map_flags(map));
    if (map == m.rings) opts.inner_map_fd = static_cast<__u32>(rings_->template_fd());
    if (map == m.unwind_states && types) {
      opts.btf_fd = static_cast<__u32>(btf__fd(types.get()));
      opts.btf_key_type_id = bpf_map__btf_key_type_id(map);
      opts.btf_value_type_id = bpf_map__btf_value_type_id(map);
    }
    UniqueFd fd(bpf_map_create(bpf_map__type(map), bpf_map__name(map), bpf_map__key_size(map),
                               bpf_map__value_size(map), bpf_map__max_entries(map), &opts));
    if (fd.get() < 0) {
      if ((errno == EPERM || errno == EACCES) && !can_trace())
        throw RecordError(tracing_privilege_error("record"));
      throw RecordError(std::string("cannot create BPF map ") + bpf_map__name(map) + ": " +
                        base::errno_text(errno));
    }
    // libbpf keeps a duplicate: fd may go.
    if (int err = bpf_map__reuse_fd(map, fd.get()); err)
      throw RecordError(std::string("cannot set up BPF map ") + bpf_map__name(map) + ": " +
                        base::errno_text(-err));
  }
}

// A recording without USDT probes loads no USDT program, one without
// functions no function program (their verification was a fifth of the
// start-up); bpf_variants.cpp then picks among the forms of those kept.
void BpfSession::select_probe_programs(const BpfSettings& s) {
  auto& p = skel_->progs;
  bpf_program__set_autoload(p.func_entry, s.functions);
  bpf_program__set_autoload(p.func_exit, s.functions);
  bpf_program__set_autoload(p.usdt_hit, s.usdt);
  bpf_program__set_autoload(p.usdt_hit_str, s.usdt);
  bpf_program__set_autoload(p.usdt_hit_str_nofault, s.usdt);
  bpf_program__set_autoload(p.module_hook, s.module_hooks);
}

void BpfSession::select_value_programs(const BpfSettings& s, const KernelFeatures& f) {
  auto& p = skel_->progs;
  const bool any = !s.values.empty(), fault = f.faulting_string_copy();
  bpf_program__set_autoload(p.func_entry_values, any && fault);
  bpf_program__set_autoload(p.func_exit_values, any && fault);
  bpf_program__set_autoload(p.func_entry_values_nofault, any && !fault);
  bpf_program__set_autoload(p.func_exit_values_nofault, any && !fault);
  if (!any) return;
  values_entry_ = fault ? p.func_entry_values : p.func_entry_values_nofault;
  values_exit_ = fault ? p.func_exit_values : p.func_exit_values_nofault;
  bpf_map__set_max_entries(skel_->maps.fn_values, s.max_id + 1);
  if (s.multi) {
    auto t = static_cast<enum bpf_attach_type>(kBpfTraceUprobeMulti);
    bpf_program__set_expected_attach_type(values_entry_, t);
    bpf_program__set_expected_attach_type(values_exit_, t);
  }
}

void BpfSession::select_stack_program(const BpfSettings& s) {
  bpf_program* p = skel_->progs.func_entry_stack;
  bpf_program__set_autoload(p, s.stacks);
  if (!s.stacks) return;
  stack_entry_ = p;
  skel_->rodata->stack_depth = s.stack_depth;
  skel_->rodata->stack_values = !s.values.empty();
  if (s.multi)
    bpf_program__set_expected_attach_type(p,
                                          static_cast<enum bpf_attach_type>(kBpfTraceUprobeMulti));
}

// Each function's spec, where the programs look it up by id.
void BpfSession::fill_values(const BpfSettings& s) {
  for (const auto& [id, v] : s.values) {
    atrace_value_spec spec = bpf_value_spec(v);
    __u32 key = id;
    if (bpf_map_update_elem(bpf_map__fd(skel_->maps.fn_values), &key, &spec, BPF_ANY) != 0)
      throw RecordError(std::string("cannot set the argument specs: ") + base::errno_text(errno));
  }
}

BpfSession::~BpfSession() {
  // The rings' and lanes' consumers go before the maps they read.
  rings_.reset();
  lanes_.reset();
  skel_.reset();
}

void BpfSession::load(const BpfSettings& s) {
  if (s.filter.active()) {
    // One slot per function id (dense from 1); the programs look nothing
    // up when filters are off.
    bpf_map__set_max_entries(skel_->maps.fn_state, s.max_id + 1);
    bpf_map__set_max_entries(skel_->maps.fn_stat, s.max_id + 1);
    skel_->rodata->filtering = true;
    skel_->rodata->filter_max_calls = s.filter.max_calls;
    if (s.filter.mode == FilterMode::Absolute) {
      skel_->rodata->filter_min_calls = s.filter.min_calls;
      skel_->rodata->filter_early_calls = std::min(s.filter.early_calls, s.filter.min_calls);
    }
  }
  if (s.multi) {
    auto t = static_cast<enum bpf_attach_type>(kBpfTraceUprobeMulti);
    auto& p = skel_->progs;
    for (bpf_program* prog :
         {p.func_entry, p.func_exit, p.usdt_hit, p.usdt_hit_str, p.usdt_hit_str_nofault})
      bpf_program__set_expected_attach_type(prog, t);
    bpf_map__set_max_entries(skel_->maps.__bpf_usdt_specs, kUsdtSpecCapacity);
  }
  if (int err = atrace_bpf::load(skel_.get()); err) {
    // With the capabilities, EACCES is the verifier refusing a program, not
    // a permission.
    if ((err == -EPERM || err == -EACCES) && !can_trace())
      throw RecordError(tracing_privilege_error("record"));
    if (err == -EACCES)
      throw RecordError("the kernel's BPF verifier refused atrace's programs (-v shows its log)");
    throw RecordError(std::string("cannot load BPF programs: ") + base::errno_text(-err));
  }
}

// Only the tracepoints of the groups asked for are loaded (and so
// attached): a group left out costs nothing, not even its tgid lookup.
void BpfSession::select_kernel_programs(const BpfSettings& s, const KernelFeatures& f) {
  const unsigned g = s.kernel_groups;
  auto want = [](bpf_program* p, bool on) { bpf_program__set_autoload(p, on); };
  auto& p = skel_->progs;
  want(p.sched_switch, g & kKernelSched);
  want(p.sched_waking, g & kKernelSched);
  want(p.sched_wakeup, g & kKernelSched);
  want(p.sched_wakeup_new, g & kKernelSched);
  want(p.sched_migrate, g & kKernelSched);
  want(p.sys_enter, g & kKernelSyscalls);
  want(p.sys_exit, g & kKernelSyscalls);
  want(p.page_fault_user, g & kKernelFaults);
  const bool cgroup = s.cgroup_id != 0;
  want(p.sched_process_fork, (g & kKernelProc) || s.follow_forks || cgroup || s.thread_forks);
  // A launched target's events start at its exec, which this program sees;
  // a process started in --cgroup's cgroup is traced from it.
  want(p.sched_process_exec, (g & kKernelProc) || s.launch || cgroup || s.follow_forks);
  want(p.task_rename, g & kKernelProc);
  want(p.net_sys_enter, g & kKernelNet);
  want(p.net_sys_exit, g & kKernelNet);
  skel_->rodata->want_proc = (g & kKernelProc) != 0;
  skel_->rodata->thread_forks = s.thread_forks;
  // A child forked in the cgroup is in it: it is followed.
  skel_->rodata->follow_forks = s.follow_forks || cgroup;
  skel_->rodata->forget_exited = s.several || s.follow_forks || cgroup;
  skel_->rodata->cgroup_id = s.cgroup_id;
  skel_->rodata->cgroup_level = s.cgroup_level;
  // Probes in every process that maps a file: the programs keep the traced.
  skel_->rodata->filter_functions = s.several || s.follow_forks || cgroup;
  adapt_to_kernel(skel_.get(), f);
}

// The calibration's probes are on atrace's own functions: while it runs,
// the rings hand their records to it alone.
const ProbeCost& BpfSession::calibrate() {
  if (!bpf_program__autoload(skel_->progs.func_entry)) {
    cost_.error = "no function probes";
    return cost_;
  }
  CalibrationRecords records;
  start([&records](const void* d, size_t n) {
    if (n < sizeof(atrace_rec_hdr)) return;
    const auto* h = static_cast<const atrace_rec_hdr*>(d);
    if (h->kind == ATRACE_REC_FUNC_ENTRY || h->kind == ATRACE_REC_FUNC_EXIT)
      records.add(h->id, h->kind == ATRACE_REC_FUNC_ENTRY, h->ts);
  });
  CalibrationOptions co;
  co.multi = multi_;
  co.ring_bytes = ring_bytes_;  // a lane holds at least as many calls
  co.drain = [this] { drain(); };
  co.records = &records;
  cost_ = calibrate_probe_cost(skel_->progs.func_entry, skel_->progs.func_exit, co);
  drain();
  start({});
  if (verbose_ && !cost_.error.empty())
    base::progress("probe cost calibration: %s", cost_.error.c_str());
  return cost_;
}

void BpfSession::start(PerCpuRings::Handler handler) { handler_ = std::move(handler); }

// Lanes first, as they hold most records; the order between the two does
// not matter to the reorderer (no ring record is joined to a lane's).
size_t BpfSession::drain() {
  size_t n = lanes_ ? lanes_->drain(handler_) : 0;
  return n + rings_->drain();
}

void BpfSession::trace(pid_t tgid) {
  __u32 key = static_cast<__u32>(tgid);
  __u8 one = 1;
  bpf_map_update_elem(bpf_map__fd(skel_->maps.traced_tgids), &key, &one, BPF_ANY);
}

void BpfSession::untrace(pid_t tgid) {
  __u32 key = static_cast<__u32>(tgid);
  bpf_map_delete_elem(bpf_map__fd(skel_->maps.traced_tgids), &key);
}

std::vector<pid_t> BpfSession::traced_processes() const {
  std::vector<pid_t> pids;
  const int fd = bpf_map__fd(skel_->maps.traced_tgids);
  __u32 key = 0, next = 0;
  const __u32* prev = nullptr;
  while (bpf_map_get_next_key(fd, prev, &next) == 0) {
    pids.push_back(static_cast<pid_t>(next));
    key = next;
    prev = &key;
  }
  return pids;
}

// --follow-forks: the programs remove a process from the map when its last
// thread exits; the recording is over when none is left.
bool BpfSession::processes_left() const {
  __u32 key = 0;
  return bpf_map_get_next_key(bpf_map__fd(skel_->maps.traced_tgids), nullptr, &key) == 0;
}

void BpfSession::attach_tracepoints() {
  if (int err = atrace_bpf::attach(skel_.get()); err || !thread_exit_attached(skel_.get()))
    throw RecordError(std::string("cannot attach the kernel tracepoints: ") +
                      base::errno_text(err ? -err : errno));
}

void BpfSession::before_exec() { skel_->bss->before_exec = true; }
void BpfSession::stopping() { skel_->bss->stopping = true; }

formats::LostCounts BpfSession::read_lost(std::string* by_kind) const {
  formats::LostCounts lost;
  lost.per_cpu.assign(static_cast<size_t>(ncpus_), 0);
  std::vector<uint64_t> values(static_cast<size_t>(ncpus_));
  for (__u32 k = 0; k < kLostSlots; ++k) {
    if (bpf_map_lookup_elem(bpf_map__fd(skel_->maps.lost), &k, values.data()) != 0) continue;
    uint64_t kind_total = 0;
    for (int c = 0; c < ncpus_; ++c) {
      lost.per_cpu[static_cast<size_t>(c)] += values[static_cast<size_t>(c)];
      kind_total += values[static_cast<size_t>(c)];
    }
    if (by_kind && kind_total)
      *by_kind +=
          (by_kind->empty() ? "" : ", ") + std::to_string(kind_total) + " " +
          // Records of their own that complete an event, not events.
          (k == ATRACE_REC_FUNC_VALUES  ? "values"
           : k == ATRACE_REC_FUNC_STACK ? "stack"
                                        : formats::to_string(static_cast<formats::EventKind>(k)));
  }
  return lost;
}

namespace {
bpf_program* if_loaded(bpf_program* p) { return bpf_program__autoload(p) ? p : nullptr; }
}  // namespace

bpf_program* BpfSession::func_entry_program() const { return if_loaded(skel_->progs.func_entry); }
bpf_program* BpfSession::func_exit_program() const { return if_loaded(skel_->progs.func_exit); }
bpf_program* BpfSession::usdt_program() const { return if_loaded(skel_->progs.usdt_hit); }
bpf_program* BpfSession::usdt_string_program() const {
  return if_loaded(atrace::usdt_string_program(skel_.get(), features_));
}
bpf_program* BpfSession::module_hook_program() const { return if_loaded(skel_->progs.module_hook); }

void BpfSession::set_fn_state(uint32_t id, const atrace_fn_state& st) {
  bpf_map_update_elem(bpf_map__fd(skel_->maps.fn_state), &id, &st, BPF_ANY);
}

SharedMapFds BpfSession::shared_maps() const {
  SharedMapFds m;
  m.rings = bpf_map__fd(skel_->maps.rings);
  m.lost = bpf_map__fd(skel_->maps.lost);
  m.traced_tgids = bpf_map__fd(skel_->maps.traced_tgids);
  m.thread_lost = bpf_map__fd(skel_->maps.thread_lost);
  m.lossy_threads = bpf_map__fd(skel_->maps.lossy_threads);
  m.unwind_states = bpf_map__fd(skel_->maps.unwind_states);
  return m;
}

int BpfSession::fn_state_fd() const { return bpf_map__fd(skel_->maps.fn_state); }
int BpfSession::fn_stat_fd() const { return bpf_map__fd(skel_->maps.fn_stat); }

}  // namespace atrace
