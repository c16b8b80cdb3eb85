#include "record/record_decoder.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "bpf/atrace.h"
#include "bpf/unwind.h"

namespace atrace {

namespace {

// The kernel kinds carry the file's kind numbers (bpf/atrace.h), so that a
// record converts without a table: tied here, where both are read.
template <typename K>
constexpr bool same_kind(enum atrace_rec_kind rec, K kind) {
  return static_cast<unsigned>(rec) == static_cast<unsigned>(kind);
}
using formats::EventKind;
static_assert(same_kind(ATRACE_REC_FUNC_ENTRY, EventKind::FuncEntry));
static_assert(same_kind(ATRACE_REC_FUNC_EXIT, EventKind::FuncExit));
static_assert(same_kind(ATRACE_REC_THREAD_EXIT, EventKind::ThreadExit));
static_assert(same_kind(ATRACE_REC_SWITCH_OUT, EventKind::SchedSwitchOut));
static_assert(same_kind(ATRACE_REC_SWITCH_IN, EventKind::SchedSwitchIn));
static_assert(same_kind(ATRACE_REC_WAKEUP, EventKind::SchedWakeup));
static_assert(same_kind(ATRACE_REC_MIGRATE, EventKind::SchedMigrate));
static_assert(same_kind(ATRACE_REC_SYS_ENTER, EventKind::SyscallEnter));
static_assert(same_kind(ATRACE_REC_SYS_EXIT, EventKind::SyscallExit));
static_assert(same_kind(ATRACE_REC_FAULT, EventKind::PageFault));
static_assert(same_kind(ATRACE_REC_FORK, EventKind::ProcFork));
static_assert(same_kind(ATRACE_REC_EXEC, EventKind::ProcExec));
static_assert(same_kind(ATRACE_REC_PROC_EXIT, EventKind::ProcExit));
static_assert(same_kind(ATRACE_REC_COMM, EventKind::Comm));
static_assert(same_kind(ATRACE_REC_USDT, EventKind::Usdt));
static_assert(same_kind(ATRACE_REC_UNWIND, EventKind::Unwind));
static_assert(ATRACE_UNWIND_ABANDONED == static_cast<int>(formats::UnwindHow::Abandoned));
static_assert(ATRACE_UNWIND_NESTING_LIMIT == static_cast<int>(formats::UnwindHow::NestingLimit));
// A loss counter per record kind, indexed by the kind (rings' lost map).
static_assert(same_kind(ATRACE_REC_MODULE_LOAD, EventKind::ModuleLoad));
static_assert(same_kind(ATRACE_REC_MODULE_UNLOAD, EventKind::ModuleUnload));
static_assert(same_kind(ATRACE_REC_NET_MSG, EventKind::Message));
static_assert(ATRACE_LOST_SLOTS > ATRACE_REC_NET_MSG);
static_assert(ATRACE_NET_TCP == static_cast<int>(formats::NetProto::Tcp));
static_assert(ATRACE_NET_UDP == static_cast<int>(formats::NetProto::Udp));
static_assert(ATRACE_NET_UNIX_STREAM == static_cast<int>(formats::NetProto::UnixStream));
static_assert(ATRACE_NET_UNIX_DGRAM == static_cast<int>(formats::NetProto::UnixDgram));
static_assert(ATRACE_NET_PIPE == static_cast<int>(formats::NetProto::Pipe));
// What --usdt accepts is what a record carries.
static_assert(ATRACE_USDT_MAX_ARGS == uprobes::kUsdtMaxArgs);
static_assert(ATRACE_USDT_MAX_STRS == uprobes::kUsdtMaxStrings);
// A USDT string as the program copies it (NUL included) is the file's
// longest string argument.
static_assert(ATRACE_USDT_STR_LEN - 1 == formats::kUsdtStringMax);
// The record's fields fit the event's.
static_assert(sizeof(atrace_rec_hdr::cpu) <= sizeof(formats::Event::cpu));
static_assert(sizeof(atrace_rec_hdr::id) <= sizeof(formats::Event::id));
static_assert(sizeof(atrace_rec_hdr) == 24, "the programs' record header (bpf/atrace.h)");

// A record's text field: NUL-terminated within its array, or cut there.
std::string text_of(const char* s, size_t max) { return std::string(s, strnlen(s, max)); }

}  // namespace

RecordDecoder::RecordDecoder(const std::vector<uprobes::UsdtTarget>& usdt,
                             std::vector<WatchedModule> modules,
                             std::map<uint32_t, uprobes::FuncValues> values)
    : modules_(std::move(modules)), values_(std::move(values)) {
  for (const auto& t : usdt)
    if (!t.sites.empty()) usdt_args_[t.id] = t.sites.front().arg_list;
}

// A USDT record -> a Usdt event: integers at the size and sign the probe's
// note gives them, strings as the program read them.
void RecordDecoder::usdt_event(const void* data, size_t size, formats::Event& ev) const {
  const auto* r = static_cast<const atrace_rec_usdt*>(data);
  ev.kind = formats::EventKind::Usdt;
  ev.id = r->hdr.id;
  auto it = usdt_args_.find(ev.id);
  const std::vector<uprobes::UsdtArg>* specs = it != usdt_args_.end() ? &it->second : nullptr;
  const auto* rs = size >= sizeof(atrace_rec_usdt_str) && r->str_mask
                       ? static_cast<const atrace_rec_usdt_str*>(data)
                       : nullptr;
  const unsigned n = std::min<unsigned>(r->nargs, ATRACE_USDT_MAX_ARGS);
  ev.args.resize(n);
  unsigned slot = 0;
  for (unsigned i = 0; i < n; i++) {
    formats::ProbeArg& a = ev.args[i];
    if (rs && (r->str_mask & (1u << i)) && slot < ATRACE_USDT_MAX_STRS) {
      a.is_string = true;
      a.size = 0;
      a.str = text_of(rs->str[slot++], ATRACE_USDT_STR_LEN);
      continue;
    }
    a.value = r->args[i];
    if (specs && i < specs->size()) {
      a.size = static_cast<uint8_t>((*specs)[i].size);
      a.is_signed = (*specs)[i].is_signed;
    }
    if (a.size < 8) {  // bpf_usdt_arg() already extended it to 64 bits
      a.value &= (uint64_t{1} << (8 * a.size)) - 1;
      if (a.is_signed && (a.value >> (8 * a.size - 1)) & 1) a.value |= ~uint64_t{0} << (8 * a.size);
    }
  }
}

DecodedRecord RecordDecoder::decode(const void* data, size_t size) const {
  DecodedRecord out;
  if (size < sizeof(atrace_rec_hdr)) return out;
  const auto* h = static_cast<const atrace_rec_hdr*>(data);
  formats::Event& ev = out.event;
  ev.ts = h->ts;
  ev.pid = h->tgid;
  ev.tid = h->tid;
  ev.cpu = h->cpu;
  switch (h->kind) {
    case ATRACE_REC_FUNC_ENTRY:
    case ATRACE_REC_FUNC_EXIT:
      ev.kind = h->kind == ATRACE_REC_FUNC_ENTRY ? formats::EventKind::FuncEntry
                                                 : formats::EventKind::FuncExit;
      ev.id = h->id;
      break;
    case ATRACE_REC_FUNC_VALUES:  // not an event: the args of one
      if (size >= sizeof(atrace_rec_values) && values_.decode(data, size, ev))
        out.type = DecodedRecord::Type::Values;
      return out;
    case ATRACE_REC_FUNC_STACK:  // not an event: the stack of one entry
      if (size >= sizeof(atrace_rec_stack)) {
        ev.kind = formats::EventKind::FuncEntry;
        ev.id = h->id;
        ev.stack = stack_frames(data, size);
        out.type = DecodedRecord::Type::Stack;
      }
      return out;
    case ATRACE_REC_THREAD_EXIT:
    case ATRACE_REC_COMM: {
      if (size < sizeof(atrace_rec_comm)) return out;
      ev.kind =
          h->kind == ATRACE_REC_COMM ? formats::EventKind::Comm : formats::EventKind::ThreadExit;
      out.thread_name = text_of(static_cast<const atrace_rec_comm*>(data)->comm, ATRACE_COMM_LEN);
      out.names_thread = true;
      if (ev.kind == formats::EventKind::Comm) ev.text = out.thread_name;
      break;
    }
    case ATRACE_REC_USDT:
      if (size < sizeof(atrace_rec_usdt)) return out;
      usdt_event(data, size, ev);
      break;
    case ATRACE_REC_UNWIND: {
      if (size < sizeof(atrace_rec_args)) return out;
      ev.kind = formats::EventKind::Unwind;
      ev.id = h->id;
      ev.flags = static_cast<uint8_t>(static_cast<const atrace_rec_args*>(data)->arg0);
      // The function programs' UNWIND names its call by the entry's time.
      if (size >= sizeof(atrace_rec_unwind))
        ev.arg0 = static_cast<const atrace_rec_unwind*>(data)->entry_ts;
      break;
    }
    case ATRACE_REC_MODULE_LOAD:
    case ATRACE_REC_MODULE_UNLOAD: {
      if (size < sizeof(atrace_rec_module)) return out;
      if (h->id == ATRACE_MODULE_LINK_MAP) {
        out.type = DecodedRecord::Type::LinkMap;
        return out;
      }
      const auto kind = static_cast<formats::EventKind>(h->kind);
      const uint64_t base = static_cast<const atrace_rec_module*>(data)->base;
      formats::Event m = module_event(modules_, kind, h->id, base);
      ev.kind = kind;
      ev.arg0 = base;
      ev.text = std::move(m.text);
      ev.args = std::move(m.args);
      break;
    }
    case ATRACE_REC_GAP:  // the record's number is not the file's (bpf/atrace.h)
      if (size < sizeof(atrace_rec_args)) return out;
      ev.kind = formats::EventKind::Gap;
      ev.arg0 = static_cast<const atrace_rec_args*>(data)->arg0;
      break;
    case ATRACE_REC_NET_MSG: {
      if (size < sizeof(atrace_rec_net)) return out;
      const auto* r = static_cast<const atrace_rec_net*>(data);
      formats::NetMessage m;
      m.recv = h->id & ATRACE_NET_RECV;
      m.offset_known = !(h->id & ATRACE_NET_NO_OFFSET);
      m.proto = static_cast<formats::NetProto>((h->id >> 1) & 7);
      m.bytes = r->bytes;
      m.seq = r->seq;
      m.family = r->family;
      std::memcpy(m.laddr, r->laddr, sizeof(m.laddr));
      std::memcpy(m.paddr, r->paddr, sizeof(m.paddr));
      m.lport = r->lport;
      m.pport = r->pport;
      m.obj = r->obj;
      m.peer_obj = r->peer_obj;
      m.call_ns = r->call_ns;
      formats::set_net_message(ev, m);
      break;
    }
    case ATRACE_REC_FILTER_HINT: out.type = DecodedRecord::Type::FilterHint; return out;
    case ATRACE_REC_FORK: {
      if (size < sizeof(atrace_rec_args)) return out;
      const auto* a = static_cast<const atrace_rec_args*>(data);
      ev.kind = formats::EventKind::ProcFork;
      ev.flags = static_cast<uint8_t>(h->id);
      ev.arg0 = a->arg0;
      ev.arg1 = a->arg1;
      if (size >= sizeof(atrace_rec_fork))
        formats::set_fork_thread_pointer(ev,
                                         static_cast<const atrace_rec_fork*>(data)->thread_pointer);
      break;
    }
    case ATRACE_REC_EXEC:
      if (size < sizeof(atrace_rec_exec)) return out;
      ev.kind = formats::EventKind::ProcExec;
      ev.text = text_of(static_cast<const atrace_rec_exec*>(data)->filename, ATRACE_PATH_LEN);
      break;
    default: {
      // The numeric kernel kinds share one layout and the file's numbers.
      if (h->kind < ATRACE_REC_SWITCH_OUT || h->kind > ATRACE_REC_PROC_EXIT) return out;
      if (size < sizeof(atrace_rec_args)) return out;
      const auto* a = static_cast<const atrace_rec_args*>(data);
      ev.kind = static_cast<formats::EventKind>(h->kind);
      ev.flags = static_cast<uint8_t>(h->id);
      ev.arg0 = a->arg0;
      ev.arg1 = a->arg1;
      break;
    }
  }
  out.type = DecodedRecord::Type::Event;
  return out;
}

}  // namespace atrace
