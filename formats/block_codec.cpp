#include "formats/block_codec.h"

#include <algorithm>

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
  if (len_ + kMaxEventBytes > buf_.size()) buf_.resize(std::max<size_t>(4096, buf_.size() * 2));
  if (meta_.count == 0) {
    meta_.tid = ev.tid;
    meta_.pid = ev.pid;
    meta_.first_ts = meta_.last_ts = ev.ts;
  }
  // The CPU rarely changes between two events of a thread: it is written
  // only on the first event of a block and when it changes.
  bool cpu_changed = meta_.count == 0 || ev.cpu != cpu_;
  // An exit that returns from the innermost entry still open in this block
  // needs no id: the reader keeps the same stack. Other exits (the entry
  // was in an earlier block, or was lost) carry their id.
  uint8_t kind = 0;
  bool with_id = false;
  switch (ev.kind) {
    case EventKind::FuncEntry:
      kind = kFuncEntry;
      with_id = true;
      open_.push_back(ev.id);
      break;
    case EventKind::FuncExit:
      if (!open_.empty() && open_.back() == ev.id) {
        kind = kFuncReturn;
        open_.pop_back();
      } else {
        kind = kFuncExit;
        with_id = true;
      }
      break;
    case EventKind::ThreadExit: kind = kThreadExit; break;
  }
  buf_[len_++] = static_cast<uint8_t>(kind | (cpu_changed ? kFlagCpu : 0));
  put_varint(ev.ts - meta_.last_ts);
  if (cpu_changed) put_varint(ev.cpu);
  if (with_id) put_varint(ev.id);
  cpu_ = ev.cpu;
  meta_.last_ts = ev.ts;
  meta_.count++;
}

void BlockBuilder::clear() {
  len_ = 0;  // the buffer is kept for the thread's next block
  open_.clear();
  meta_ = {};
}

void BlockCursor::reset(const BlockMeta& m, std::span<const uint8_t> payload) {
  in_ = ByteReader(payload);
  meta_ = m;
  ts_ = m.first_ts;
  open_.clear();
  cpu_ = 0;
  decoded_ = 0;
}

uint16_t BlockCursor::read_cpu() {
  uint64_t cpu = in_.varint();
  if (cpu > UINT16_MAX) throw Malformed{};
  return static_cast<uint16_t>(cpu);
}

void BlockCursor::skip_payload(uint8_t kind, UnknownKindCounts& unknown) {
  // Kinds defined in 2.0 that the in-memory API cannot represent yet are
  // skipped silently; kinds from a newer minor version are counted.
  in_.skip(in_.varint());
  if (kind > kLastDefinedKind) unknown[kind]++;
}

}  // namespace atrace::fmt
