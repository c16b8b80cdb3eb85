// After the clocks are corrected, a receive can still come before its
// send: the corrections are only as good as their bounds. The repair
// moves receives forward, by the least that puts each one at least the
// pair's minimum delay after its send, as Scalasca's controlled logical
// clock (Becker, Rabenseifner, Wolf, 2009) does, simplified:
//  - a forward jump at a violating receive, the same shift carried on to
//    the host's later events, then given back gradually (each later
//    interval shortened by at most `amortization`, never below zero
//    shift), so the host returns to its corrected time line;
//  - backward amortisation: the events before the jump are moved forward
//    too, on a ramp of slope `amortization`, so no interval stretches by
//    more than that fraction, stopping at a send whose (already placed)
//    receive would otherwise be too early.
// Events only move forward, and each host's events keep their order.
// Unlike the full CLC this does not reprocess collectives or revisit a
// receive already placed when a later ramp moves its send.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "sync/sync_types.h"

namespace atrace::sync {

// A matched message: the send is event send_event of host send_host's
// event list, the receive event recv_event of recv_host's.
struct MatchedMessage {
  HostIndex send_host = 0;
  size_t send_event = 0;
  HostIndex recv_host = 0;
  size_t recv_event = 0;
};

struct RepairOptions {
  // The least delay a receive must be after its send, per (from, to)
  // host pair; default_min_delay_ns for the others (0: only "not before").
  std::map<std::pair<HostIndex, HostIndex>, int64_t> min_delay_ns;
  int64_t default_min_delay_ns = 0;
  double amortization = 0.01;
};

struct PairRepair {
  size_t violations_before = 0;
  size_t violations_after = 0;
};

struct RepairResult {
  std::map<std::pair<HostIndex, HostIndex>, PairRepair> pairs;  // (a < b)
  std::vector<int64_t> largest_shift_ns;                        // per host
  size_t violations_before = 0;
  size_t violations_after = 0;  // only if the messages form a cycle
};

// times: per host, its events' corrected times, ascending; rewritten in
// place.
RepairResult causal_repair(std::vector<std::vector<int64_t>>& times,
                           const std::vector<MatchedMessage>& messages,
                           const RepairOptions& options = {});

// Copies the repair's counts into the reports of the pairs they concern.
void note_repair(std::vector<PairReport>& pairs, const RepairResult& repair);

}  // namespace atrace::sync
