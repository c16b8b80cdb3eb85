// A merged trace's clock corrections (the CORRECTIONS frame, FORMAT.md):
// how each host's raw CLOCK_MONOTONIC time stamps map onto the merged time
// line, and the sync report that says how far to trust it. `atrace merge`
// writes it (tools/merge_*), TraceReader applies it to every time stamp it
// hands out, `atrace info` prints the report. The maps and the report are
// sync/'s own values: this header only names them in a file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "formats/varint.h"
#include "sync/sync.h"

namespace atrace::formats {

// One recording of a merged trace (Event::host indexes them).
struct MergedHost {
  std::string source;   // the file it came from, as given to merge
  std::string command;  // its traced command (TraceHeader::target_command)
  std::string kernel;   // its kernel release
  // Raw time stamp -> merged time line: sync::map_time(map, raw); never
  // empty. Also holds the causal repair's shifts (docs/merge.md).
  std::vector<sync::Segment> map;
  uint32_t parent = 0;           // the spanning tree's (itself for the reference)
  bool connected = true;         // false: no evidence links it; its map is the identity
  int64_t largest_shift_ns = 0;  // the causal repair's largest shift of its events
};

struct Corrections {
  uint32_t reference = 0;    // the host whose clock is the time line
  bool estimated = false;    // `merge --estimate`: one boot's pairs estimated anyway
  int64_t min_delay_ns = 0;  // the causal repair's least delay of a message
  uint64_t messages = 0;     // matched messages between different hosts
  std::vector<MergedHost> hosts;
  std::vector<sync::PairReport> pairs;
};

void encode_corrections(const Corrections& c, ByteWriter& out);
// Throws Malformed.
Corrections decode_corrections(ByteReader in);

}  // namespace atrace::formats
