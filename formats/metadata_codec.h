// Encoding of the tables a v2 trace holds besides events: HEADER, STRINGS,
// PROBES and FOOTER payloads (formats/FORMAT.md). Every decoder ignores bytes
// after the fields it knows: that is how minor versions add fields.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "formats/trace_types.h"
#include "formats/varint.h"

namespace atrace::formats {

// One row of the footer index: where a frame is and, for EVENTS frames,
// whose events it holds and when.
struct IndexEntry {
  uint64_t offset = 0;
  uint8_t type = 0;
  uint32_t tid = 0;
  uint32_t pid = 0;
  uint32_t count = 0;
  uint64_t first_ts = 0;
  uint64_t last_ts = 0;
  uint16_t host = 0;  // EVENTS: from the block header (merged traces), not the index
};

struct Footer {
  TraceHeader header;  // end clocks set
  LostCounts lost;
  std::vector<ThreadInfo> threads;
  std::vector<IndexEntry> index;
};

void encode_header(const TraceHeader& h, ByteWriter& out);
// End clocks are not part of HEADER (the footer has them): left 0.
TraceHeader decode_header(ByteReader in);

// Interns strings; ids are dense from 0 in order of first use, across all
// STRINGS frames of a file.
class StringInterner {
 public:
  uint32_t id(const std::string& s);
  // Appends a STRINGS payload with the strings added since the last call;
  // false (nothing appended) when there are none.
  bool flush(ByteWriter& out);

 private:
  std::unordered_map<std::string, uint32_t> ids_;
  std::vector<std::string> pending_;
  uint32_t next_ = 0, flushed_ = 0;
};

// Appends to `table`; throws Malformed if the frame's first id is not the
// table's size (a STRINGS frame is missing or out of order).
void decode_strings(ByteReader in, std::vector<std::string>& table);

void encode_probes(const std::vector<ProbeInfo>& probes, StringInterner& strings, ByteWriter& out);
std::vector<ProbeInfo> decode_probes(ByteReader in, const std::vector<std::string>& strings);

// A PROCESSES payload: its strings are its own (no string table), so the
// frame can come at any point of the file.
void encode_processes(const std::vector<ProcessInfo>& processes, ByteWriter& out);
std::vector<ProcessInfo> decode_processes(ByteReader in);

// A CLOCKS payload: the host's identity and the snapshots taken since the
// previous one (strings its own, like PROCESSES).
// A merged trace's CLOCKS frames name their host (index) at the end.
void encode_clocks(const HostClocks& clocks, ByteWriter& out, uint16_t host = 0);
HostClocks decode_clocks(ByteReader in, uint16_t* host = nullptr);

void encode_footer(const Footer& f, ByteWriter& out);
// `max_frames`: how many frames the file has room for (its size /
// kMinFrameSize); a longer index is malformed.
Footer decode_footer(ByteReader in, uint64_t max_frames = UINT64_MAX);

}  // namespace atrace::formats
