// The BPF side of one recording: atrace's programs (bpf/atrace.bpf.c)
// opened, given their read-only settings and loaded; the per-CPU rings and
// lanes; the loss counters; the map of traced processes. Every kernel object is owned
// here by RAII (the skeleton, the rings), so however a recording leaves,
// nothing of it stays in the kernel. Its maps are written through the
// methods below (trace(), set_fn_state(), ...): nobody else wires them.
//
// Only the programs the recording uses are loaded (BpfSettings says
// which): each one the verifier checks costs start-up time, 5-50 ms here.
//
//   BpfSession s(settings, features);  // load; throws RecordError
//   s.calibrate();                      // the probe cost, on the rings
//   s.start(handler);                   // from here, records go to handler
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "formats/trace_types.h"
#include "record/calibrate.h"
#include "record/features.h"
#include "record/filter_policy.h"
#include "record/lanes.h"
#include "record/rings.h"
#include "record/usdt_specs.h"
#include "uprobes/value_spec.h"

struct atrace_bpf;
struct atrace_fn_state;
struct bpf_program;

namespace atrace {

struct BpfSettings {
  // Per CPU (rounded up to a ring size); with function probes, this for
  // the lane of their entries and exits (bpf/lanes.bpf.h), half for the
  // ring of the rest.
  size_t buffer_bytes = 8u << 20;
  unsigned kernel_groups = 0;  // kernel_groups.h
  bool follow_forks = false;
  // The fast path: a new thread's fork is recorded whatever the groups, its
  // thread pointer naming the thread of its records (fastpath/thread_pointers.h).
  bool thread_forks = false;
  // Several traced processes (-p A,B, --cgroup, --follow-forks): the
  // programs take each out of the map at its exit (processes_left()).
  bool several = false;
  // --cgroup: the cgroup v2 id (its directory's inode) and depth below the
  // root; a process that execs in it or below joins the map. 0: none.
  uint64_t cgroup_id = 0;
  uint32_t cgroup_level = 0;
  bool launch = false;   // a launched target: its events start at its exec
  bool multi = false;    // function and USDT probes on uprobe_multi links
  FilterOptions filter;  // the programs' part of the relevance filters
  uint32_t max_id = 0;   // largest function id (filter maps' size)
  // --args/--retval by function id (record_plan.h); empty: the values
  // programs are not even loaded.
  std::map<uint32_t, uprobes::FuncValues> values;
  // --stack: some functions record their call stack (the stack program is
  // not even loaded otherwise), at most stack_depth frames.
  bool stacks = false;
  uint32_t stack_depth = 32;
  bool verbose = false;  // calibration problems on stderr
  // Which probe programs to load: function probes (or a calibration),
  // USDT probes, the module hooks (module_watch.h). Those left out are
  // neither verified nor loaded.
  bool functions = true;
  bool usdt = true;
  bool module_hooks = true;
};

// The maps the unwind guard's own object shares with these programs
// (unwind_guard.h): their fds, valid while the session lives.
struct SharedMapFds {
  int rings = -1, lost = -1, traced_tgids = -1, thread_lost = -1, lossy_threads = -1;
  int unwind_states = -1;
};

// What identifies atrace's programs (a hash of the BPF object): a probe
// cost measured with other programs is not theirs (calibrate_cache.h).
std::string bpf_programs_id();

class BpfSession {
 public:
  // Runs on a thread of its own while these programs are verified, given
  // the maps this session shares (made before its load for that): another
  // BPF object's load (the unwind guard's), which then costs no start-up
  // time of its own on a machine with a second CPU. Its exception is
  // thrown here, after the load.
  using Alongside = std::function<void(const SharedMapFds&)>;
  BpfSession(const BpfSettings& s, const KernelFeatures& f, const Alongside& alongside = {});
  ~BpfSession();
  BpfSession(const BpfSession&) = delete;
  BpfSession& operator=(const BpfSession&) = delete;

  // What a probe hit costs here, on each entry path, measured on atrace's
  // own functions with these very programs (calibrate.h); their records
  // stay out of the recording. Call once, before start().
  const ProbeCost& calibrate();
  // Every record the rings deliver from now on goes to `handler`.
  void start(PerCpuRings::Handler handler);

  // The programs the probes are attached with; null when not loaded
  // (BpfSettings).
  bpf_program* func_entry_program() const;
  bpf_program* func_exit_program() const;
  bpf_program* usdt_program() const;
  bpf_program* usdt_string_program() const;  // the form this kernel has
  bpf_program* module_hook_program() const;
  // The entry and exit programs of the functions with values
  // (bpf/atrace_values.bpf.h): the sleepable ones where the kernel can
  // fault a string's page in; null when none are recorded.
  bpf_program* values_entry_program() const { return values_entry_; }
  bpf_program* values_exit_program() const { return values_exit_; }
  // The argument specs of USDT sites on uprobe_multi links; null when the
  // USDT programs were loaded for libbpf's perf-event links.
  UsdtSpecTable* usdt_specs() const { return usdt_specs_.get(); }
  // The entry program of the functions with --stack; null when none.
  bpf_program* stack_entry_program() const { return stack_entry_; }
  int ncpus() const { return ncpus_; }
  // How often the rings must be drained not to fill (see bpf_session.cpp).
  uint64_t drain_period_ns() const { return drain_period_ns_; }
  int rings_fd() const { return rings_->epoll_fd(); }
  // Every record the lanes and the rings hold, lanes first; how many.
  size_t drain();

  // The programs record the threads of process `tgid` (and, with
  // --follow-forks, of its descendants, which they add themselves).
  void trace(pid_t tgid);
  // The processes in the map now: those trace() put there and those the
  // programs added (a followed child, a process exec'd in --cgroup's).
  std::vector<pid_t> traced_processes() const;
  // Out of the map: a process that exited before the programs could see it.
  void untrace(pid_t tgid);
  // Whether a traced process is left: the programs remove one when its
  // last thread exits.
  bool processes_left() const;
  // Attaches the programs that are not probes (the kernel groups'
  // tracepoints, thread exits); throws RecordError.
  void attach_tracepoints();
  // Until the launched child's execve, it runs atrace's code (the exec
  // program clears the flag).
  void before_exec();
  // No call starts from here on; the calls in flight still close
  // (bpf/atrace.bpf.c, stop_gate).
  void stopping();

  // The records the kernel could not hand over, per CPU; `by_kind` gets
  // "12 syscall, 3 entry" when not null.
  formats::LostCounts read_lost(std::string* by_kind = nullptr) const;

  // A function's filter state (bpf/atrace.h), before its probes fire.
  void set_fn_state(uint32_t id, const atrace_fn_state& st);
  SharedMapFds shared_maps() const;
  // The filter maps the relevance filters read and write (relevance.h).
  int fn_state_fd() const;
  int fn_stat_fd() const;

 private:
  struct SkelDeleter {
    void operator()(atrace_bpf* s) const;
  };
  void create_shared_maps();
  void select_probe_programs(const BpfSettings& s);
  void select_kernel_programs(const BpfSettings& s, const KernelFeatures& f);
  void load(const BpfSettings& s);
  void select_value_programs(const BpfSettings& s, const KernelFeatures& f);
  void fill_values(const BpfSettings& s);
  void select_stack_program(const BpfSettings& s);
  bpf_program* stack_entry_ = nullptr;
  bpf_program* values_entry_ = nullptr;
  bpf_program* values_exit_ = nullptr;
  std::unique_ptr<UsdtSpecTable> usdt_specs_;

  std::unique_ptr<atrace_bpf, SkelDeleter> skel_;
  std::unique_ptr<PerCpuRings> rings_;
  std::unique_ptr<SlotLanes> lanes_;  // null: no function probes
  PerCpuRings::Handler handler_;      // of both
  int ncpus_ = 0;
  size_t ring_bytes_ = 0;
  uint32_t lane_slots_ = 0;
  bool multi_ = false;
  bool verbose_ = false;
  uint64_t drain_period_ns_ = 0;
  ProbeCost cost_;
  KernelFeatures features_;
};

}  // namespace atrace
