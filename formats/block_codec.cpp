#include "formats/block_codec.h"

namespace atrace::fmt {

using namespace v2;  // NOLINT: the format's constants

void encode_block_meta(const BlockMeta& m, ByteWriter& out) {
  out.u32(m.tid);
  out.u32(m.pid);
  out.u64(m.first_ts);
  out.u64(m.last_ts);
  out.u32(m.count);
}

BlockMeta decode_block_meta(std::span<const uint8_t> ext) {
  if (ext.size() < kEventsExtSize) throw Malformed{};
  ByteReader r(ext);
  BlockMeta m;
  m.tid = r.u32();
  m.pid = r.u32();
  m.first_ts = r.u64();
  m.last_ts = r.u64();
  m.count = r.u32();
  if (m.last_ts < m.first_ts) throw Malformed{};
  return m;
}

void BlockBuilder::add(const Event& ev) {
  if (meta_.count == 0) {
    meta_.tid = ev.tid;
    meta_.pid = ev.pid;
    meta_.first_ts = meta_.last_ts = ev.ts;
  }
  // The CPU rarely changes between two events of a thread: it is written
  // only on the first event of a block and when it changes.
  bool cpu_changed = meta_.count == 0 || ev.cpu != cpu_;
  uint8_t kind = 0;
  switch (ev.kind) {
    case EventKind::FuncEntry: kind = kFuncEntry; break;
    case EventKind::FuncExit: kind = kFuncExit; break;
    case EventKind::ThreadExit: kind = kThreadExit; break;
  }
  buf_.u8(static_cast<uint8_t>(kind | (cpu_changed ? kFlagCpu : 0)));
  buf_.varint(ev.ts - meta_.last_ts);
  if (cpu_changed) buf_.varint(ev.cpu);
  if (kind != kThreadExit) buf_.varint(ev.id);
  cpu_ = ev.cpu;
  meta_.last_ts = ev.ts;
  meta_.count++;
}

void BlockBuilder::clear() {
  buf_.clear();
  meta_ = {};
}

void BlockCursor::reset(const BlockMeta& m, std::span<const uint8_t> payload) {
  in_ = ByteReader(payload);
  meta_ = m;
  ts_ = m.first_ts;
  cpu_ = 0;
  decoded_ = 0;
}

bool BlockCursor::next(Event& ev, UnknownKindCounts& unknown) {
  while (decoded_ < meta_.count) {
    uint8_t b = in_.u8();
    if (b & kFlagReserved) throw Malformed{};
    uint8_t kind = b & kKindMask;
    uint64_t delta = in_.varint();
    if (delta > meta_.last_ts - ts_) throw Malformed{};  // past the block's end
    ts_ += delta;
    if (b & kFlagCpu) {
      uint64_t cpu = in_.varint();
      if (cpu > UINT16_MAX) throw Malformed{};
      cpu_ = static_cast<uint16_t>(cpu);
    }
    decoded_++;
    ev.ts = ts_;
    ev.pid = meta_.pid;
    ev.tid = meta_.tid;
    ev.cpu = cpu_;
    switch (kind) {
      case kFuncEntry:
        ev.kind = EventKind::FuncEntry;
        ev.id = in_.varint32();
        return true;
      case kFuncExit:
        ev.kind = EventKind::FuncExit;
        ev.id = in_.varint32();
        return true;
      case kThreadExit:
        ev.kind = EventKind::ThreadExit;
        ev.id = 0;
        return true;
      default:
        break;
    }
    if (kind < kFirstPayloadKind) throw Malformed{};  // compact kinds are all known
    // Kinds defined in 2.0 that the in-memory API cannot represent yet are
    // skipped silently; kinds from a newer minor version are counted.
    in_.skip(in_.varint());
    if (kind > kLastDefinedKind) unknown[kind]++;
  }
  if (!in_.empty()) throw Malformed{};  // more bytes than the count says
  return false;
}

}  // namespace atrace::fmt
