// What a trace carries so that `atrace merge` can put it on one time line
// with traces of other hosts (issue 32): which host and boot recorded it,
// and its clocks read side by side at the start, every second and at the
// stop, with the kernel's own account of REALTIME's error. Time stamps
// stay raw (MONOTONIC, as BPF reads it): corrections are merge's, stored
// beside them.
#pragma once

#include <cstdint>

#include "formats/trace_types.h"

namespace atrace {

// The host's identity: boot id, machine id, host name (snapshots empty).
formats::HostClocks host_identity();

// One snapshot: REALTIME and BOOTTIME between two MONOTONIC readings, the
// narrowest bracket of a few tries (a preemption widens one, not all),
// then adjtimex(2) for the kernel's error bound and NTP state.
formats::ClockSnapshot read_clocks(formats::ClockSnapshot::When when);

// The snapshots of one recording: one at start(), then due() every
// `period_ns` of MONOTONIC, one at stop(); take() hands over the ones not
// yet written, with the host's identity.
class ClockEvidence {
 public:
  explicit ClockEvidence(uint64_t period_ns = 1'000'000'000) : period_ns_(period_ns) {}
  void start();
  // A periodic snapshot when one is due at MONOTONIC `now`; true if taken.
  bool due(uint64_t now);
  void stop();
  // The identity and the snapshots since the last take() (none: empty).
  formats::HostClocks take();

 private:
  uint64_t period_ns_;
  uint64_t next_ns_ = 0;
  formats::HostClocks pending_;
  bool have_identity_ = false;
};

}  // namespace atrace
