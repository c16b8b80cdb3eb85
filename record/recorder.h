// `atrace record`: the recording engine end to end.
//
//   selectors -> probe sites -> BPF programs -> per-CPU rings -> reorder
//   -> trace writer
//
// The recorder owns every kernel object it creates (links, rings, maps) by
// RAII, so however it leaves, probes go with it; the target is never
// stopped (attach mode) and a launched target is always waited for.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "record/filter_policy.h"
#include "record/record_error.h"
#include "record/rotate_options.h"

namespace atrace {

class EventSink;
class StopSignals;

// How function probes are attached: uprobe_multi links where the kernel
// has them (Auto), always (Multi: an error where it has not), or one
// perf-event link per probe (Perf).
enum class AttachMode { Auto, Multi, Perf };

// --stack-depth: the default and the cap (bpf/atrace.h's ATRACE_STACK_SMALL
// and ATRACE_STACK_MAX; the cap is the kernel's default perf_event_max_stack).
constexpr uint32_t kDefaultStackDepth = 32;
constexpr uint32_t kMaxStackDepth = 127;

struct RecordOptions {
  // The trace file ("-": stdout); empty: none, the events go to the sink
  // alone (record()).
  std::string output = "atrace.data";
  pid_t pid = 0;  // attach mode when > 0: the first of `pids`
  // -p A,B,...: every process traced (pid is pids[0]); --cgroup fills it
  // with the cgroup's processes at the start.
  std::vector<pid_t> pids;
  // --cgroup: a cgroup v2 path (absolute, or relative to the cgroup v2
  // root): its processes and those started in it later are traced.
  std::string cgroup;
  std::vector<std::string> command;  // launch mode when not empty
  std::string select;                // selector list (required)
  std::string exclude;
  std::string usdt;  // --usdt specs (uprobes/usdt_select.h)
  // Function arguments and return values (uprobes/value_spec.h); their
  // selectors must name functions --select traces.
  std::string args, retval;
  // User call stacks at the entry of these functions (a --select list,
  // ';' or ',' separated; record/stack_rules.h), at most stack_depth frames.
  std::string stack;
  uint32_t stack_depth = kDefaultStackDepth;
  double duration_s = 0;            // 0: until the target exits or a signal
  size_t buffer_bytes = 8u << 20;   // per CPU
  std::string atrace_command_line;  // for the trace header
  bool verbose = false;
  AttachMode attach_mode = AttachMode::Auto;
  // Kernel event groups of the traced threads (kernel_groups.h).
  unsigned kernel_groups = 0;
  // Child processes are traced too (functions and kernel events); the
  // recording then ends when every traced process has exited.
  bool follow_forks = false;
  // Every entry probe on its function's first instruction, as other tracers
  // place them, instead of the cheapest one of its prefix (uprobes/placement.h).
  bool probe_at_entry = false;
  // --fast-path: the selected functions of an attached process are patched
  // to record in the process itself (record/fast_path.h); those that
  // cannot be patched are not traced.
  bool fast_path = false;
  // --fast-path=hot (with fast_path): the kernel's probes first; a function
  // the relevance filter would detach for its cost is patched instead
  // (record/hot_switch.h). Attach mode, one process.
  bool fast_path_hot = false;
  // --fast-path-buffer: records a CPU's lane holds (a power of two;
  // record/fast_path.h kFastPathLaneSlots).
  uint64_t fast_path_lane_slots = uint64_t{1} << 23;
  // Relevance filters (filter_policy.h).
  FilterOptions filter;
  // --rotate: a series of files instead of one (rotation.h).
  RotateOptions rotate;
};

struct RecordResult {
  int exit_status = 0;  // launch mode: the target's; attach mode: 0
  uint64_t events = 0;
  uint64_t hits = 0;  // function entries and USDT hits among the events
  uint64_t lost = 0;
  // Where and why, when lost > 0: "buffer full: 12 syscall, 3 entry;
  // fast-path: 2 lane full, 1 not written in time".
  std::string lost_by_kind;
  // The option that gives the buffers that overflowed more room ("" when
  // none overflowed: the losses had other causes).
  std::string lost_hint;
  size_t probes = 0;
  // The trace could not be written to the end (said on stderr when it
  // happened; the file is readable up to there): the run failed.
  std::string write_error;
};

// Throws RecordError for anything the user can fix. `stop` was created
// first thing by the caller (stop_signals.h). `sink` (event_sink.h), when
// given, gets every event the file gets, and may end the recording.
RecordResult record(const RecordOptions& opts, StopSignals& stop, EventSink* sink = nullptr);

}  // namespace atrace
