// Probe-cost calibration: what one traced call (entry uprobe + uretprobe)
// costs on this machine, measured at start-up on functions of atrace's own
// (record/calibrate_fns.S) whose first instruction takes each path the
// kernel has: optimized NOP5, emulated int3, single-stepped int3
// (kernel-notes/emulated-vs-single-step.md). The probes are the recorder's
// own kind, attached the recorder's way with its BPF programs, so a hit
// runs the same code as in the target. The costs go into the trace header;
// `atrace report --compensate` subtracts them (DESIGN.md, "Relevance
// filters").
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/trace_types.h"

struct bpf_program;

namespace atrace {

// The cookies of the calibration probes, one per path from this id up
// (never a real probe id: those are dense from 1). Their records reach the
// rings like any function's, while the rings hand everything to
// CalibrationOptions::records (bpf_session.h): the calibration runs before
// the recording has the rings, so none reaches the trace.
inline constexpr uint32_t kCalibrationProbeId = 0xFFFFFFF0u;
inline constexpr bool is_calibration_probe(uint32_t id) { return id >= kCalibrationProbeId; }

// By the path of the entry probe, in ns; 0 when not measured.
struct ProbeCost {
  // What one traced call (entry + return probe) adds to its caller's time:
  // the thread's CPU time per call, probed minus unprobed.
  uint64_t nop5_ns = 0;
  uint64_t emulated_ns = 0;
  uint64_t single_step_ns = 0;
  // The part of it that falls between the call's own entry and exit
  // timestamps (the entry program reads the clock before the kernel
  // emulates or single-steps the first instruction, the return program
  // after the return trap): what the probes add to the call's measured
  // duration. The median interval of an empty function's calls.
  uint64_t nop5_inside_ns = 0;
  uint64_t emulated_inside_ns = 0;
  uint64_t single_step_inside_ns = 0;
  uint64_t took_ns = 0;  // the whole calibration, attach to detach
  std::string error;     // why something is 0; empty when all were measured
  // The costs by path, as the header stores them and the filters read them.
  formats::ProbeCosts table() const {
    return {nop5_ns,        emulated_ns,        single_step_ns,
            nop5_inside_ns, emulated_inside_ns, single_step_inside_ns};
  }
};

// The calibration probes' records as the recorder drains them: entry and
// exit timestamps per probe id, in any order (a thread that migrates puts
// an entry and its exit into two CPUs' rings).
class CalibrationRecords {
 public:
  void add(uint32_t id, bool entry, uint64_t ts) { recs_.push_back({id, entry, ts}); }
  // The median of exit - entry over the calls of probe `id` (which never
  // nest: one thread calls an empty function), 0 when none was recorded.
  uint64_t median_interval(uint32_t id) const;
  void clear() { recs_.clear(); }

 private:
  struct Rec {
    uint32_t id;
    bool entry;
    uint64_t ts;
  };
  std::vector<Rec> recs_;
};

struct CalibrationOptions {
  bool multi = true;      // uprobe_multi links (as loaded), else perf-event links
  size_t ring_bytes = 0;  // per-CPU ring size; 0: assume 64 KiB
  // Empties the rings, handing the calibration probes' records to `records`.
  // Called between batches, outside the timed calls, so that no ring fills
  // and no record is counted lost.
  std::function<void()> drain;
  // Where `drain` puts the calibration records; null: the inside costs are
  // not measured.
  CalibrationRecords* records = nullptr;
  bool single_step = true;  // measure the single-stepped path (~5 ms more)
};

// Never throws and never fails the recording: any error (no file mapping,
// attach refused, ...) gives zeros for what was not measured and a reason.
// Runs the calls on the calling thread: about 20 ms of its CPU time here
// (18-24 ms; 0.1-0.2 s of wall time while the 2 CPUs had a load of 10).
// The probes' detach (an RCU grace period per link, ~0.1 s) runs on a
// background thread so the caller does not wait for it; the links hold
// their programs, so the caller may destroy its BPF object meanwhile. Call
// it once per process: a second calibration could find the first one's
// probes still being removed.
ProbeCost calibrate_probe_cost(bpf_program* entry, bpf_program* exit,
                               const CalibrationOptions& opts);

// ---- pure parts (unit-tested) ----

// The file and file offset a code address of this process is mapped from,
// given /proc/self/maps text; nullopt when no file mapping holds it.
struct MappedCode {
  std::string path;
  uint64_t offset = 0;
};
std::optional<MappedCode> mapping_of(std::string_view maps, uint64_t address);

// Per-call time (ns) of the batch at the lower quartile (each batch's time
// divided by its calls): disturbances only ever add time, so the faster
// batches are the probe's own cost, and a quartile is steadier than the min.
double lower_quartile_per_call(std::vector<double> batch_ns, size_t calls_per_batch);

// Added ns per call: probed minus baseline, rounded, never negative.
uint64_t added_cost_ns(double probed_per_call, double baseline_per_call);

// Calls per batch so that a batch's records (2 per call, 32 bytes each with
// the ring's header) fill at most a quarter of a ring: any CPU the thread
// runs on then has room, whatever was there before the last drain.
size_t calls_per_batch(size_t ring_bytes, size_t wanted);

}  // namespace atrace
