// The relevance filters while a recording runs: samples the programs'
// per-function statistics on the recorder's timer (or at once when a
// program hints that a function crossed a threshold), lets the policy
// decide (filter_policy.h), takes the decided functions out (detacher.h)
// and hands back the DETACH events for the trace.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bpf/atrace.h"
#include "formats/trace_types.h"
#include "record/detacher.h"
#include "record/filter_policy.h"
#include "record/map_memory.h"

namespace atrace {

class FastPath;

class RelevanceRun {
 public:
  // `state_fd`/`stat_fd`: the fn_state and fn_stat maps, sized for the
  // largest id in `table` + 1. `keep`: ids never filtered. `floor_ns` and
  // `cost_ns`: calibrated per entry path (index = ProbePath), may be empty.
  RelevanceRun(const FilterOptions& o, FunctionProbes& probes, int state_fd, int stat_fd, int ncpus,
               pid_t pid, const std::vector<formats::ProbeInfo>& table,
               const std::vector<uint32_t>& keep, std::vector<uint64_t> floor_ns,
               std::vector<uint64_t> cost_ns);
  ~RelevanceRun();
  RelevanceRun(const RelevanceRun&) = delete;
  RelevanceRun& operator=(const RelevanceRun&) = delete;

  // --fast-path=hot: a function decided for its cost (absolute, relative,
  // budget) that has a trampoline in `fast` is patched instead of detached
  // (record/hot_switch.h), DETACH reason PatchedInstead.
  void patch_with(FastPath* fast) { fast_ = fast; }
  // A program's hint: decide at the next tick, whatever the period.
  void hint() { due_ = true; }
  // Decides and detaches when due; returns the DETACH events (tid 0).
  std::vector<formats::Event> tick(uint64_t now);
  // Closes what is pending; then detached() and summary() are final.
  void finish();
  const std::vector<formats::ProbeInfo>& detached() const { return detached_; }
  // One line: how many, and how long from decision to probes gone.
  std::string summary() const;

 private:
  std::vector<FunctionSample> sample();
  bool read_all_stats(std::vector<atrace_fn_stat>& all);  // by id, then CPU
  uint64_t traced_cpu_ns();

  FilterOptions o_;
  RelevanceFilter policy_;
  std::vector<uint64_t> cost_ns_;
  int stat_fd_;
  int ncpus_;
  pid_t pid_;
  std::vector<formats::ProbeInfo> table_;  // by id
  MapMemory state_map_;                    // fn_state, shared with the programs
  atrace_fn_state* state_ = nullptr;
  size_t state_len_ = 0;
  std::unique_ptr<Detacher> detacher_;
  std::vector<formats::ProbeInfo> detached_;
  FastPath* fast_ = nullptr;
  size_t patched_ = 0, not_patched_ = 0;  // by the hot switch, and those it could not
  // Decided, found busy by the switch since `since`: tried again
  // (relevance.cpp, kBusyRetryNs).
  struct Busy {
    FilterDecision decision;
    uint64_t since = 0;
  };
  std::map<uint32_t, Busy> busy_;
  uint64_t last_tick_ = 0, last_cpu_ = 0;
  bool due_ = false;
};

}  // namespace atrace
