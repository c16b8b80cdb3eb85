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
#include <vector>

#include "formats/format_v2.h"
#include "formats/trace_types.h"
#include "formats/varint.h"

namespace atrace::formats {

// The ext header of an EVENTS frame.
struct BlockMeta {
  uint32_t tid = 0;
  uint32_t pid = 0;
  uint64_t first_ts = 0;  // the base of the first delta
  uint64_t last_ts = 0;
  uint32_t count = 0;
  // A merged trace's blocks name their host after 2.0's fields (ext 30
  // bytes); absent = 0, and not written for 0 (single recordings).
  uint16_t host = 0;
};

void encode_block_meta(const BlockMeta& m, ByteWriter& out);
// Throws Malformed if ext is shorter than 2.0's fields (longer is fine).
BlockMeta decode_block_meta(std::span<const uint8_t> ext);

class BlockBuilder {
 public:
  // Whether `ev` can be appended: same process, not earlier than the last
  // event (deltas are unsigned), and the count still fits.
  bool accepts(const Event& ev) const {
    return meta_.count == 0 || (ev.pid == meta_.pid && ev.host == meta_.host &&
                                ev.ts >= meta_.last_ts && meta_.count < UINT32_MAX);
  }
  void add(const Event& ev);
  bool empty() const { return meta_.count == 0; }
  size_t bytes() const { return len_; }
  const BlockMeta& meta() const { return meta_; }
  std::span<const uint8_t> payload() const { return {buf_.data(), len_}; }
  void clear();

 private:
  // The writer's hot loop: bytes go straight into a buffer grown ahead of
  // need (an event takes at most kMaxEventBytes), not one push_back each.
  static constexpr size_t kMaxEventBytes = 1 + 10 + 3 + 5;
  void put_varint(uint64_t v) {
    while (v >= 0x80) {
      buf_[len_++] = static_cast<uint8_t>(v | 0x80);
      v >>= 7;
    }
    buf_[len_++] = static_cast<uint8_t>(v);
  }
  std::vector<uint8_t> buf_;
  ByteWriter payload_;          // a kernel event's payload, before its length
  ByteWriter stack_;            // a FUNC_STACK's payload
  std::vector<uint32_t> open_;  // probe ids of the block's open entries
  size_t len_ = 0;
  BlockMeta meta_;
  uint16_t cpu_ = 0;
};

// Events of kinds this reader does not know, per kind (written by a newer
// minor version); the reader turns them into one warning per kind.
using UnknownKindCounts = std::array<uint64_t, 64>;

class BlockCursor {
 public:
  void reset(const BlockMeta& m, std::span<const uint8_t> payload);
  // Events the API can represent, one at a time. Payload kinds it cannot
  // represent are skipped (unknown ones counted in `unknown`). Throws Malformed on bytes that do
  // not decode.
  //
  // Decoding is split in two so the reader can order threads on the next
  // event's time and then decode that event straight into the caller's
  // Event (no intermediate copy). Inline: this is the reader's inner loop.
  //
  // peek(): reads the next event's kind, time and CPU, skipping payload
  // kinds the API lacks; false at the end of the block. ts() is then its
  // time.
  bool peek(UnknownKindCounts& unknown) {
    while (decoded_ < meta_.count) {
      uint8_t b = in_.u8();
      if (b & v2::kFlagReserved) throw Malformed{};
      uint64_t delta = in_.varint();
      if (delta > meta_.last_ts - ts_) throw Malformed{};  // past the block's end
      ts_ += delta;
      if (b & v2::kFlagCpu) cpu_ = read_cpu();
      uint8_t kind = b & v2::kKindMask;
      if (kind < v2::kFirstPayloadKind || v2::is_api_payload_kind(kind)) {
        pending_ = kind;
        return true;
      }
      skip_payload(kind, unknown);
      decoded_++;
    }
    if (!in_.empty()) throw Malformed{};  // more bytes than the count says
    return false;
  }
  uint64_t ts() const { return ts_; }
  // take(): decodes the rest of the peeked event into ev.
  void take(Event& ev) {
    uint8_t kind = pending_;
    ev.flags = 0;
    ev.arg0 = ev.arg1 = 0;
    if (!ev.text.empty()) ev.text.clear();
    if (!ev.args.empty()) ev.args.clear();
    if (kind >= v2::kFirstPayloadKind) {
      take_payload(ev);
    } else if (kind == v2::kFuncEntry) {
      ev.kind = EventKind::FuncEntry;
      ev.id = in_.varint32();
      open_.push_back(ev.id);
    } else if (kind == v2::kFuncReturn) {
      if (open_.empty()) throw Malformed{};
      ev.kind = EventKind::FuncExit;
      ev.id = open_.back();
      open_.pop_back();
    } else if (kind == v2::kFuncExit) {
      ev.kind = EventKind::FuncExit;
      ev.id = in_.varint32();
    } else if (kind == v2::kThreadExit) {
      ev.kind = EventKind::ThreadExit;
      ev.id = 0;
    } else {
      throw Malformed{};  // compact kinds are all known: this one is invalid
    }
    decoded_++;
    if (kind <= v2::kFuncReturn && kind != v2::kThreadExit) take_values(ev);
    if (!ev.stack.empty()) ev.stack.clear();
    if (kind == v2::kFuncEntry) take_stack(ev);
    ev.ts = ts_;
    ev.pid = meta_.pid;
    ev.tid = meta_.tid;
    ev.host = meta_.host;
    ev.cpu = cpu_;
  }
  // Both at once; false at the end of the block.
  bool next(Event& ev, UnknownKindCounts& unknown) {
    if (!peek(unknown)) return false;
    take(ev);
    return true;
  }
  uint32_t decoded() const { return decoded_; }

 private:
  uint16_t read_cpu();
  void take_payload(Event& ev);
  void take_values(Event& ev);
  void take_stack(Event& ev);
  void skip_payload(uint8_t kind, UnknownKindCounts& unknown);

  ByteReader in_;
  std::vector<uint32_t> open_;  // probe ids of the block's open entries
  BlockMeta meta_;
  uint64_t ts_ = 0;
  uint16_t cpu_ = 0;
  uint8_t pending_ = 0;  // kind of the peeked event
  uint32_t decoded_ = 0;
};

}  // namespace atrace::formats
