// What a trace's clock snapshots (formats::HostClocks) say in a few
// numbers, for `atrace info`: how many, how narrow their brackets, how
// REALTIME moved against MONOTONIC over the recording (NTP slewing, or a
// step), and the kernel's last word on REALTIME's error.
#pragma once

#include <cstdint>
#include <optional>

#include "formats/trace_types.h"

namespace atrace::analysis {

struct ClockSummary {
  size_t snapshots = 0, periodic = 0;
  bool has_start = false, has_stop = false;
  uint64_t min_width_ns = 0, max_width_ns = 0;  // MONOTONIC brackets
  // REALTIME minus MONOTONIC, last snapshot against first: its change in
  // ns, and that change per second of MONOTONIC in parts per million;
  // nullopt with fewer than two snapshots.
  std::optional<int64_t> real_drift_ns;
  std::optional<double> real_drift_ppm;
  uint64_t span_ns = 0;  // MONOTONIC from the first snapshot to the last
  // The last snapshot's adjtimex: REALTIME's error bound and estimate.
  uint64_t maxerror_us = 0, esterror_us = 0;
  bool synchronised = false;
};

// nullopt when the trace has no snapshots (files of older writers).
std::optional<ClockSummary> summarize_clocks(const formats::HostClocks& clocks);

}  // namespace atrace::analysis
