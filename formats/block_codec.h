// Event blocks: the events of one thread, encoded compactly
// (formats/FORMAT.md, "EVENTS frames" and "Event encoding").
//
// BlockBuilder accumulates one thread's events as the writer receives them;
// BlockCursor decodes a block's payload one event at a time, so the reader
// never holds more than the raw bytes of a block.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "formats/format_v2.h"
#include "formats/trace_types.h"
#include "formats/varint.h"

namespace atrace::fmt {

// The ext header of an EVENTS frame.
struct BlockMeta {
  uint32_t tid = 0;
  uint32_t pid = 0;
  uint64_t first_ts = 0;  // the base of the first delta
  uint64_t last_ts = 0;
  uint32_t count = 0;
};

void encode_block_meta(const BlockMeta& m, ByteWriter& out);
// Throws Malformed if ext is shorter than 2.0's fields (longer is fine).
BlockMeta decode_block_meta(std::span<const uint8_t> ext);

class BlockBuilder {
 public:
  // Whether `ev` can be appended: same process, not earlier than the last
  // event (deltas are unsigned), and the count still fits.
  bool accepts(const Event& ev) const {
    return meta_.count == 0 ||
           (ev.pid == meta_.pid && ev.ts >= meta_.last_ts && meta_.count < UINT32_MAX);
  }
  void add(const Event& ev);
  bool empty() const { return meta_.count == 0; }
  size_t bytes() const { return buf_.size(); }
  const BlockMeta& meta() const { return meta_; }
  std::span<const uint8_t> payload() const { return buf_.buf(); }
  void clear();

 private:
  ByteWriter buf_;
  BlockMeta meta_;
  uint16_t cpu_ = 0;
};

// Events of kinds this reader does not know, per kind (written by a newer
// minor version); the reader turns them into one warning per kind.
using UnknownKindCounts = std::array<uint64_t, 64>;

class BlockCursor {
 public:
  void reset(const BlockMeta& m, std::span<const uint8_t> payload);
  // Next event the API can represent; false at the end of the block.
  // Payload kinds are skipped (unknown ones counted in `unknown`).
  // Throws Malformed on bytes that do not decode.
  bool next(Event& ev, UnknownKindCounts& unknown);
  uint32_t decoded() const { return decoded_; }

 private:
  ByteReader in_;
  BlockMeta meta_;
  uint64_t ts_ = 0;
  uint16_t cpu_ = 0;
  uint32_t decoded_ = 0;
};

}  // namespace atrace::fmt
