#include "record/func_values.h"

#include <cstring>
#include <string>

namespace atrace {

namespace {

static_assert(ATRACE_VALUE_REGS == formats::kMaxFuncArgs, "arg1..arg6");
static_assert(ATRACE_VALUE_STRS == uprobes::kMaxStringArgs);
static_assert(ATRACE_VALUE_STR_LEN - 1 == formats::kUsdtStringMax, "the file's longest string");
static_assert(ATRACE_STR_OK == static_cast<int>(formats::StrState::Ok));
static_assert(ATRACE_STR_NULL == static_cast<int>(formats::StrState::Null));
static_assert(ATRACE_STR_UNREADABLE == static_cast<int>(formats::StrState::Unreadable));
static_assert(ATRACE_STR_CUT == static_cast<int>(formats::StrState::Cut));

// A register's value as the user typed it: cut to its size, sign-extended
// when signed (the ABI leaves the upper bits of a narrower argument
// undefined: they are never shown).
formats::ProbeArg typed(const uprobes::ValueType& t, uint8_t slot, uint64_t reg) {
  formats::ProbeArg a;
  a.slot = slot;
  a.format = t.format;
  a.is_signed = t.is_signed;
  a.size = t.size;
  a.value = reg;
  if (t.is_string) {
    a.is_string = true;
    a.is_signed = false;
    a.size = 0;
    return a;
  }
  if (a.size < 8) {
    a.value &= (uint64_t{1} << (8 * a.size)) - 1;
    if (a.is_signed && (a.value >> (8 * a.size - 1)) & 1) a.value |= ~uint64_t{0} << (8 * a.size);
  }
  return a;
}

}  // namespace

atrace_value_spec bpf_value_spec(const uprobes::FuncValues& v) {
  atrace_value_spec s{};
  s.entry = !v.args.empty();
  s.exit = v.has_retval;
  s.ret_str = v.has_retval && v.retval.is_string;
  for (const auto& a : v.args)
    if (a.type.is_string && s.nstr < ATRACE_VALUE_STRS)
      s.str_arg[s.nstr++] = static_cast<uint8_t>(a.slot - 1);
  return s;
}

bool ValueDecoder::decode(const void* data, size_t size, formats::Event& out) const {
  const auto* r = static_cast<const atrace_rec_values*>(data);
  auto spec = specs_.find(r->hdr.id);
  if (spec == specs_.end()) return false;
  const auto* rs = size >= sizeof(atrace_rec_values_str) && r->nstr
                       ? static_cast<const atrace_rec_values_str*>(data)
                       : nullptr;
  out.kind = r->of_kind == ATRACE_REC_FUNC_ENTRY ? formats::EventKind::FuncEntry
                                                 : formats::EventKind::FuncExit;
  out.id = r->hdr.id;
  out.tid = r->hdr.tid;
  out.pid = r->hdr.tgid;
  out.ts = r->hdr.ts;
  out.args.clear();
  // The strings are in the order the spec names them (bpf_value_spec).
  unsigned str = 0;
  auto take_str = [&](formats::ProbeArg& a) {
    if (!rs || str >= r->nstr || str >= ATRACE_VALUE_STRS) {
      a.str_state = formats::StrState::Unreadable;
      return;
    }
    a.str_state = static_cast<formats::StrState>(r->str_state[str] & 3);
    a.str.assign(rs->str[str], strnlen(rs->str[str], ATRACE_VALUE_STR_LEN - 1));
    str++;
  };
  if (out.kind == formats::EventKind::FuncEntry) {
    for (const auto& spec_arg : spec->second.args) {
      formats::ProbeArg a = typed(spec_arg.type, spec_arg.slot, r->regs[spec_arg.slot - 1]);
      if (a.is_string) take_str(a);
      out.args.push_back(std::move(a));
    }
  } else if (spec->second.has_retval) {
    formats::ProbeArg a = typed(spec->second.retval, formats::kArgRetval, r->regs[0]);
    if (a.is_string) take_str(a);
    out.args.push_back(std::move(a));
  }
  return true;
}

bool join_values(Reorderer& held, formats::Event&& values) {
  formats::Event* ev = held.find_held(values.tid, values.ts, values.kind, values.id);
  if (!ev) return false;
  ev->args = std::move(values.args);
  return true;
}

}  // namespace atrace
