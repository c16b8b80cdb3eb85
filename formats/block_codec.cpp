#include "formats/block_codec.h"

#include <algorithm>

namespace atrace::formats {

using namespace v2;  // NOLINT: the format's constants

// An event's kind is written as its number (trace_types.h gives the API the
// file's numbers): tied here, where one is turned into the other.
template <typename K>
constexpr bool same_kind(EventKind api, K file) {
  return static_cast<uint8_t>(api) == static_cast<uint8_t>(file);
}
static_assert(same_kind(EventKind::FuncEntry, kFuncEntry));
static_assert(same_kind(EventKind::FuncExit, kFuncExit));
static_assert(same_kind(EventKind::ThreadExit, kThreadExit));
static_assert(same_kind(EventKind::SchedSwitchOut, kSchedSwitchOut));
static_assert(same_kind(EventKind::SchedSwitchIn, kSchedSwitchIn));
static_assert(same_kind(EventKind::SchedWakeup, kSchedWakeup));
static_assert(same_kind(EventKind::SchedMigrate, kSchedMigrate));
static_assert(same_kind(EventKind::SyscallEnter, kSyscallEnter));
static_assert(same_kind(EventKind::SyscallExit, kSyscallExit));
static_assert(same_kind(EventKind::PageFault, kPageFault));
static_assert(same_kind(EventKind::ProcFork, kProcFork));
static_assert(same_kind(EventKind::ProcExec, kProcExec));
static_assert(same_kind(EventKind::ProcExit, kProcExit));
static_assert(same_kind(EventKind::Comm, kComm));
static_assert(same_kind(EventKind::Detach, kDetach));
static_assert(same_kind(EventKind::Usdt, kUsdt));
static_assert(same_kind(EventKind::Unwind, kUnwind));
static_assert(same_kind(EventKind::ModuleLoad, kModuleLoad));
static_assert(same_kind(EventKind::ModuleUnload, kModuleUnload));
static_assert(same_kind(EventKind::Gap, kGap));
static_assert(same_kind(EventKind::Gap, kLastApiKind), "the API's last kind");
static_assert(same_kind(EventKind::Message, kMessage));

namespace {
// MESSAGE's payload (FORMAT.md): u8 flags, u8 protocol, varint bytes,
// varint seq, then TCP/UDP: u8 family, local address (4 or 16 bytes),
// varint port, peer address, varint port; UNIX/PIPE: varint obj, varint
// peer_obj; then varint call_ns (absent in the first writers' files).
void encode_message(const NetMessage& m, ByteWriter& out) {
  out.u8(
      static_cast<uint8_t>((m.recv ? kMessageRecv : 0) | (m.offset_known ? 0 : kMessageNoOffset)));
  out.u8(static_cast<uint8_t>(m.proto));
  out.varint(m.bytes);
  out.varint(m.seq);
  if (m.inet()) {
    const size_t n = m.family == 4 ? 4 : 16;
    out.u8(m.family == 4 ? 4 : 6);
    out.bytes(m.laddr, n);
    out.varint(m.lport);
    out.bytes(m.paddr, n);
    out.varint(m.pport);
  } else {
    out.varint(m.obj);
    out.varint(m.peer_obj);
  }
  out.varint(m.call_ns);
}

NetMessage decode_message(ByteReader& p) {
  NetMessage m;
  const uint8_t flags = p.u8();
  m.recv = flags & kMessageRecv;
  m.offset_known = !(flags & kMessageNoOffset);
  m.proto = static_cast<NetProto>(p.u8());
  m.bytes = p.varint();
  m.seq = p.varint();
  if (m.inet()) {
    m.family = p.u8();
    if (m.family != 4 && m.family != 6) throw Malformed{};
    const size_t n = m.family == 4 ? 4 : 16;
    for (size_t i = 0; i < n; i++) m.laddr[i] = p.u8();
    m.lport = static_cast<uint16_t>(p.varint());
    for (size_t i = 0; i < n; i++) m.paddr[i] = p.u8();
    m.pport = static_cast<uint16_t>(p.varint());
  } else {
    m.obj = p.varint();
    m.peer_obj = p.varint();
  }
  if (!p.empty()) m.call_ns = p.varint();  // appended after the first writers
  return m;
}
}  // namespace

void encode_block_meta(const BlockMeta& m, ByteWriter& out) {
  out.u32(m.tid);
  out.u32(m.pid);
  out.u64(m.first_ts);
  out.u64(m.last_ts);
  out.u32(m.count);
  if (m.host) out.u16(m.host);
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
  if (r.left() >= 2) m.host = r.u16();
  if (m.last_ts < m.first_ts) throw Malformed{};
  return m;
}

// Kinds 16 and up carry a length-prefixed payload (FORMAT.md, "Payload
// kinds"): kernel events and the recorder's own (DETACH).
static bool is_payload_kind(EventKind k) { return static_cast<uint8_t>(k) >= kFirstPayloadKind; }

// USDT argument spec byte (FORMAT.md, kind 29).
constexpr uint8_t kUsdtSizeMask = 0x0f, kUsdtString = 0x40, kUsdtSigned = 0x80;
static uint8_t usdt_arg_spec(const ProbeArg& a) {
  return static_cast<uint8_t>((a.is_string ? kUsdtString : (a.size & kUsdtSizeMask)) |
                              (a.is_signed ? kUsdtSigned : 0));
}

// FUNC_VALUES spec byte (FORMAT.md, kind 34): the USDT bits plus the format.
constexpr uint8_t kValueHex = 0x10, kValuePointer = 0x20;

static void encode_func_values(const std::vector<ProbeArg>& args, ByteWriter& out) {
  out.u8(static_cast<uint8_t>(args.size()));
  for (const auto& a : args) {
    out.u8(a.slot);
    uint8_t spec = usdt_arg_spec(a);
    if (a.format == ArgFormat::Hex) spec |= kValueHex;
    if (a.format == ArgFormat::Pointer) spec |= kValuePointer;
    out.u8(spec);
    if (a.is_string) {
      out.u8(static_cast<uint8_t>(a.str_state));
      out.varint(a.value);
      out.str(a.str);
    } else {
      for (unsigned i = 0; i < a.size; i++) out.u8(static_cast<uint8_t>(a.value >> (8 * i)));
    }
  }
}

// An integer of `size` bytes, little-endian, sign-extended when signed.
static uint64_t read_sized(ByteReader& p, uint8_t size, bool is_signed) {
  if (size != 1 && size != 2 && size != 4 && size != 8) throw Malformed{};
  uint64_t v = 0;
  for (unsigned i = 0; i < size; i++) v |= uint64_t{p.u8()} << (8 * i);
  if (is_signed && size < 8 && (v >> (8 * size - 1)) & 1) v |= ~uint64_t{0} << (8 * size);
  return v;
}

// FUNC_STACK (FORMAT.md, kind 35): the count, the innermost address, then
// each next one as a signed difference (frames of one module are close).
static void encode_func_stack(const std::vector<uint64_t>& stack, ByteWriter& out) {
  const size_t n = std::min(stack.size(), kMaxStackFrames);
  out.u8(static_cast<uint8_t>(n));
  uint64_t prev = 0;
  for (size_t i = 0; i < n; i++) {
    out.svarint(static_cast<int64_t>(stack[i] - prev));
    prev = stack[i];
  }
}

static void decode_func_stack(ByteReader& p, std::vector<uint64_t>& stack) {
  const unsigned n = p.u8();
  if (n > kMaxStackFrames) throw Malformed{};
  stack.resize(n);
  uint64_t prev = 0;
  for (auto& a : stack) {
    a = prev + static_cast<uint64_t>(p.svarint());
    prev = a;
  }
}

static void decode_func_values(ByteReader& p, std::vector<ProbeArg>& args) {
  args.resize(p.u8());
  for (auto& a : args) {
    a.slot = p.u8();
    uint8_t spec = p.u8();
    if (a.slot > kMaxFuncArgs) throw Malformed{};
    a.size = spec & kUsdtSizeMask;
    a.is_signed = spec & kUsdtSigned;
    a.is_string = spec & kUsdtString;
    a.format = spec & kValuePointer ? ArgFormat::Pointer
               : spec & kValueHex   ? ArgFormat::Hex
                                    : ArgFormat::Decimal;
    if (a.is_string) {
      uint8_t state = p.u8();
      if (state > static_cast<uint8_t>(StrState::Cut)) throw Malformed{};
      a.str_state = static_cast<StrState>(state);
      a.value = p.varint();
      a.str = p.str();
    } else {
      a.value = read_sized(p, a.size, a.is_signed);
    }
  }
}

// The payload of a payload kind, in `out`.
static void encode_payload(const Event& ev, ByteWriter& out) {
  switch (ev.kind) {
    case EventKind::SchedSwitchOut:
      out.u8(ev.flags);
      out.varint(ev.arg0);
      break;
    case EventKind::SchedSwitchIn:
    case EventKind::SyscallEnter: out.varint(ev.arg0); break;
    case EventKind::SchedWakeup:
    case EventKind::SchedMigrate:
      out.varint(ev.arg0);
      out.varint(ev.arg1);
      break;
    case EventKind::SyscallExit:
      out.varint(ev.arg0);
      out.svarint(ev.sarg1());
      break;
    case EventKind::PageFault:
      out.u64(ev.arg0);
      out.u64(ev.arg1);
      out.u8(ev.flags);
      break;
    case EventKind::ProcFork:
      out.varint(ev.arg0);
      out.varint(ev.arg1);
      out.u8(ev.flags);
      // Appended field: the child's thread pointer, when the recorder knew it.
      if (uint64_t tp = fork_thread_pointer(ev)) out.varint(tp);
      break;
    case EventKind::ProcExec:
    case EventKind::Comm: out.str(ev.text); break;
    case EventKind::ProcExit: out.svarint(ev.sarg0()); break;
    case EventKind::Detach:
      out.varint(ev.id);
      out.u8(ev.flags);
      out.varint(ev.arg0);
      out.varint(ev.arg1);
      break;
    case EventKind::Unwind:
      out.varint(ev.id);
      out.u8(ev.flags);
      // Appended field: how long before it the call it ends was entered.
      if (ev.arg0 && ev.arg0 <= ev.ts) out.varint(ev.ts - ev.arg0);
      break;
    case EventKind::ModuleLoad:
    case EventKind::ModuleUnload:
      out.str(ev.text);
      out.varint(ev.arg0);
      out.str(module_build_id(ev));
      break;
    case EventKind::Gap: out.varint(ev.arg0); break;
    case EventKind::Message: encode_message(net_message(ev), out); break;
    case EventKind::Usdt:
      out.varint(ev.id);
      out.u8(static_cast<uint8_t>(ev.args.size()));
      for (const auto& a : ev.args) {
        out.u8(usdt_arg_spec(a));
        if (a.is_string) out.str(a.str);
        else
          for (unsigned i = 0; i < a.size; i++) out.u8(static_cast<uint8_t>(a.value >> (8 * i)));
      }
      break;
    case EventKind::FuncEntry:
    case EventKind::FuncExit:
    case EventKind::ThreadExit: break;
  }
}

void BlockBuilder::add(const Event& ev) {
  bool with_payload = is_payload_kind(ev.kind);
  if (with_payload) {
    payload_.clear();
    encode_payload(ev, payload_);
  }
  // A function's values follow it as a FUNC_VALUES record (delta 0).
  const bool with_values =
      !ev.args.empty() && (ev.kind == EventKind::FuncEntry || ev.kind == EventKind::FuncExit);
  if (with_values) {
    payload_.clear();
    encode_func_values(ev.args, payload_);
  }
  // And its call stack as a FUNC_STACK record (delta 0), after the values.
  const bool with_stack = !ev.stack.empty() && ev.kind == EventKind::FuncEntry;
  if (with_stack) {
    stack_.clear();
    encode_func_stack(ev.stack, stack_);
  }
  size_t need = kMaxEventBytes + (with_payload || with_values ? 13 + payload_.size() : 0) +
                (with_stack ? 13 + stack_.size() : 0);
  if (len_ + need > buf_.size())
    buf_.resize(std::max<size_t>({4096, buf_.size() * 2, len_ + need}));
  if (meta_.count == 0) {
    meta_.tid = ev.tid;
    meta_.pid = ev.pid;
    meta_.host = ev.host;
    meta_.first_ts = meta_.last_ts = ev.ts;
  }
  // The CPU rarely changes between two events of a thread: it is written
  // only on the first event of a block and when it changes.
  bool cpu_changed = meta_.count == 0 || ev.cpu != cpu_;
  // An exit that returns from the innermost entry still open in this block
  // needs no id: the reader keeps the same stack. Other exits (the entry
  // was in an earlier block, or was lost) carry their id.
  uint8_t kind = static_cast<uint8_t>(ev.kind);
  bool with_id = false;
  switch (ev.kind) {
    case EventKind::FuncEntry:
      with_id = true;
      open_.push_back(ev.id);
      break;
    case EventKind::FuncExit:
      if (!open_.empty() && open_.back() == ev.id) {
        kind = kFuncReturn;
        open_.pop_back();
      } else {
        with_id = true;
      }
      break;
    default: break;
  }
  buf_[len_++] = static_cast<uint8_t>(kind | (cpu_changed ? kFlagCpu : 0));
  put_varint(ev.ts - meta_.last_ts);
  if (cpu_changed) put_varint(ev.cpu);
  if (with_id) put_varint(ev.id);
  if (with_payload) {
    put_varint(payload_.size());
    std::copy(payload_.buf().begin(), payload_.buf().end(),
              buf_.begin() + static_cast<ptrdiff_t>(len_));
    len_ += payload_.size();
  }
  if (with_values) {
    buf_[len_++] = kFuncValues;
    put_varint(0);
    put_varint(payload_.size());
    std::copy(payload_.buf().begin(), payload_.buf().end(),
              buf_.begin() + static_cast<ptrdiff_t>(len_));
    len_ += payload_.size();
    meta_.count++;
  }
  if (with_stack) {
    buf_[len_++] = kFuncStack;
    put_varint(0);
    put_varint(stack_.size());
    std::copy(stack_.buf().begin(), stack_.buf().end(),
              buf_.begin() + static_cast<ptrdiff_t>(len_));
    len_ += stack_.size();
    meta_.count++;
  }
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

// The FUNC_VALUES record right after a function event, if any: its values
// become the event's args (delta 0 by construction; a later one is skipped
// as an orphan by peek()).
void BlockCursor::take_values(Event& ev) {
  if (decoded_ >= meta_.count || in_.peek_u8() != kFuncValues) return;
  in_.u8();
  if (in_.varint() != 0) throw Malformed{};
  ByteReader p(in_.take(in_.varint()));
  decode_func_values(p, ev.args);
  decoded_++;
}

// The FUNC_STACK record after a function entry (and its values), if any.
void BlockCursor::take_stack(Event& ev) {
  if (decoded_ >= meta_.count || in_.peek_u8() != kFuncStack) return;
  in_.u8();
  if (in_.varint() != 0) throw Malformed{};
  ByteReader p(in_.take(in_.varint()));
  decode_func_stack(p, ev.stack);
  decoded_++;
}

void BlockCursor::take_payload(Event& ev) {
  // A payload may be longer than the fields known here (a later minor
  // version appends fields): decode from its own bytes, skip the rest.
  ByteReader p(in_.take(in_.varint()));
  ev.kind = static_cast<EventKind>(pending_);
  ev.id = 0;
  switch (ev.kind) {
    case EventKind::SchedSwitchOut:
      ev.flags = p.u8();
      ev.arg0 = p.varint();
      break;
    case EventKind::SchedSwitchIn:
    case EventKind::SyscallEnter: ev.arg0 = p.varint(); break;
    case EventKind::SchedWakeup:
    case EventKind::SchedMigrate:
      ev.arg0 = p.varint();
      ev.arg1 = p.varint();
      break;
    case EventKind::SyscallExit:
      ev.arg0 = p.varint();
      ev.arg1 = static_cast<uint64_t>(p.svarint());
      break;
    case EventKind::PageFault:
      ev.arg0 = p.u64();
      ev.arg1 = p.u64();
      ev.flags = p.u8();
      break;
    case EventKind::ProcFork:
      ev.arg0 = p.varint();
      ev.arg1 = p.varint();
      ev.flags = p.u8();
      set_fork_thread_pointer(ev, p.empty() ? 0 : p.varint());
      break;
    case EventKind::ProcExec:
    case EventKind::Comm: ev.text = p.str(); break;
    case EventKind::ProcExit: ev.arg0 = static_cast<uint64_t>(p.svarint()); break;
    case EventKind::Detach:
      ev.id = p.varint32();
      ev.flags = p.u8();  // a reason this reader does not know is kept as is
      ev.arg0 = p.varint();
      ev.arg1 = p.varint();
      break;
    case EventKind::Unwind:
      ev.id = p.varint32();
      ev.flags = p.u8();  // a value this reader does not know is kept as is
      ev.arg0 = 0;
      if (!p.empty()) {
        uint64_t since = p.varint();  // ev.ts is set after the payload: ts_
        if (since <= ts_) ev.arg0 = ts_ - since;
      }
      break;
    case EventKind::ModuleLoad:
    case EventKind::ModuleUnload:
      ev.text = p.str();
      ev.arg0 = p.varint();
      set_module_build_id(ev, p.str());
      break;
    case EventKind::Gap: ev.arg0 = p.varint(); break;
    case EventKind::Message: set_net_message(ev, decode_message(p)); break;
    case EventKind::Usdt: {
      ev.id = p.varint32();
      unsigned n = p.u8();
      ev.args.resize(n);
      for (auto& a : ev.args) {
        uint8_t spec = p.u8();
        a.size = spec & kUsdtSizeMask;
        a.is_signed = spec & kUsdtSigned;
        a.is_string = spec & kUsdtString;
        if (a.is_string) a.str = p.str();
        else a.value = read_sized(p, a.size, a.is_signed);  // sign-extended in memory
      }
      break;
    }
    default: throw Malformed{};  // peek() only stops at the kinds above
  }
}

}  // namespace atrace::formats
