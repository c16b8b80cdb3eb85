// A simulated distributed run with known clocks, for the tests and the
// bench: hosts with offsets and drifts (and an NTP-like change of rate),
// messages with asymmetric delays and jitter, other events, REALTIME
// snapshots with an NTP error, all as the recordings would give them; and
// the truth to score a correction against.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "sync/causal_repair.h"
#include "sync/piecewise.h"
#include "sync/sync_types.h"

namespace atrace::sync {

struct SimOptions {
  uint32_t hosts = 4;
  uint64_t seed = 1;
  int64_t duration_ns = 20'000'000'000;
  int64_t max_offset_ns = 10'000'000'000;  // each host's offset: +-this
  double min_drift_ppm = 5;                // |drift| in [min, max], either sign
  double max_drift_ppm = 30;
  // Each direction of each link: a minimum delay in [min_delay, max_delay/2]
  // (log-uniform), plus jitter, exponential with a mean of min_jitter to
  // max_jitter times that minimum, drawn per direction (asymmetric);
  // delays stay under max_delay.
  int64_t min_delay_ns = 20'000;
  int64_t max_delay_ns = 2'000'000;
  double min_jitter = 0.1;
  double max_jitter = 0.5;
  int64_t message_interval_ns = 20'000'000;  // mean gap, per direction
  int64_t event_interval_ns = 10'000'000;    // other events, per host
  // Hosts past 4 talk to the next in a ring and to `extra_links` others.
  uint32_t extra_links = 1;
  // NTP-like: from slew_at_ns on, each host's drift changes by +-slew_ppm
  // (either sign, at least half of it). Negative: no change.
  int64_t slew_at_ns = -1;
  double slew_ppm = 0;
  int64_t max_realtime_error_ns = 2'000'000;  // each host's REALTIME off by up to this
  int64_t snapshot_interval_ns = 1'000'000'000;
};

// One host's true clock: local = base + rate1 * t before the change,
// continuing at rate2 after it.
struct SimClock {
  int64_t base_ns = 0;
  double rate1 = 1, rate2 = 1;
  int64_t change_at_ns = -1;
  int64_t local(int64_t true_ns) const;
};

struct Simulation {
  SyncInput input;
  std::vector<SimClock> clocks;
  std::vector<std::vector<int64_t>> event_local;  // per host, ascending
  std::vector<std::vector<int64_t>> event_true;
  std::vector<MatchedMessage> matched;
  std::vector<std::pair<HostIndex, HostIndex>> links;               // a < b
  std::map<std::pair<HostIndex, HostIndex>, int64_t> min_delay_ns;  // (from, to)
};

Simulation simulate(const SimOptions& options);

// How a correction did against the truth.
struct LinkScore {
  HostIndex a = 0, b = 0;
  int64_t max_error_ns = 0;  // |(a corrected) - (b corrected)| over both hosts' events
  int64_t allowed_ns = 0;    // half the two directions' minimum delays
};
struct SimScore {
  std::vector<LinkScore> links;
  int64_t max_error_ns = 0;   // any host against the reference host, any event
  size_t outside_bounds = 0;  // events whose error exceeds their host's bound
  size_t events = 0;
};
SimScore score(const Simulation& sim, const std::vector<HostCorrection>& hosts);

// One pair's map (b to a) against the truth, over both hosts' events.
int64_t pair_error(const Simulation& sim, HostIndex a, HostIndex b, const Segments& b_to_a);

// The constant offset tools apply today (Perfetto's averaged one): the
// mean one-way times of both directions, halved. No drift, no bound.
Segments averaged_offset(const std::vector<MessageSample>& a_to_b,
                         const std::vector<MessageSample>& b_to_a);

// The messages of one direction of a link in sim.input.
const std::vector<MessageSample>& samples(const Simulation& sim, HostIndex from, HostIndex to);

// Each host's events, corrected (input for causal_repair).
std::vector<std::vector<int64_t>> corrected_events(const Simulation& sim,
                                                   const std::vector<HostCorrection>& hosts);

}  // namespace atrace::sync
