// The clock corrections of a merge (`atrace merge`, docs/merge.md): from
// what each recording says about its clock and the messages its processes
// exchanged, each host's map onto the reference host's time line and the
// sync report. The evidence comes in as values (the command reads the
// traces); the algorithms are sync/'s; this file only joins the two:
//   - message ends matched (message_match.h), the messages between
//     different hosts become sync samples: a send's latest possible
//     departure (its system call's entry), a receive's earliest possible
//     arrival... seen from the other side (its call's exit);
//   - sync::synchronize gives each host's map and the pair reports;
//   - sync::causal_repair moves receives the maps still put before their
//     sends, and its shifts are folded into the maps (knots at the
//     messages, ramps of the repair's amortisation around them), so that
//     a reader applying the maps sees no receive before its send.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/message_match.h"
#include "formats/corrections.h"
#include "formats/trace_types.h"
#include "sync/sync.h"

namespace atrace::analysis {

struct ClockMergeOptions {
  // Estimate hosts of one boot anyway (merge --estimate), to check the
  // method where the truth (offset 0) is known.
  bool estimate_same_boot = false;
  // The least delay a receive must follow its send by (merge --min-delay).
  int64_t min_delay_ns = 0;
  uint32_t reference = 0;
};

// The HostClocks of one recording as sync/ reads them.
sync::HostClock sync_clock(const formats::HostClocks& h);

// hosts: one per recording (Event::host); ends: every message event of
// every recording (MessageEnd::host set). The result's hosts have only
// their maps and tree fields set: the caller adds sources and commands.
formats::Corrections merge_clocks(const std::vector<formats::HostClocks>& hosts,
                                  const std::vector<MessageEnd>& ends,
                                  const ClockMergeOptions& options);

// The departure of a send as clock synchronisation takes it: its system
// call's entry (the event is at its exit; the bytes left in between).
inline int64_t send_departure(const MessageEnd& e) {
  return static_cast<int64_t>(e.ts) - static_cast<int64_t>(e.m.call_ns);
}

}  // namespace atrace::analysis
