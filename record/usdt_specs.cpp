#include "record/usdt_specs.h"

#include <asm/ptrace.h>  // struct pt_regs, the layout usdt.bpf.h reads registers from
#include <bpf/bpf.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>

#include "base/diagnostics.h"

namespace atrace {

namespace {

// The names a note may give each register (all widths), and where the
// register sits in struct pt_regs: the same table as libbpf's
// calc_pt_regs_off() for x86-64.
struct RegNames {
  const char* names[4];
  size_t offset;
};

const RegNames kRegisters[] = {
    {{"rip", "eip", "", ""}, offsetof(pt_regs, rip)},
    {{"rax", "eax", "ax", "al"}, offsetof(pt_regs, rax)},
    {{"rbx", "ebx", "bx", "bl"}, offsetof(pt_regs, rbx)},
    {{"rcx", "ecx", "cx", "cl"}, offsetof(pt_regs, rcx)},
    {{"rdx", "edx", "dx", "dl"}, offsetof(pt_regs, rdx)},
    {{"rsi", "esi", "si", "sil"}, offsetof(pt_regs, rsi)},
    {{"rdi", "edi", "di", "dil"}, offsetof(pt_regs, rdi)},
    {{"rbp", "ebp", "bp", "bpl"}, offsetof(pt_regs, rbp)},
    {{"rsp", "esp", "sp", "spl"}, offsetof(pt_regs, rsp)},
    {{"r8", "r8d", "r8w", "r8b"}, offsetof(pt_regs, r8)},
    {{"r9", "r9d", "r9w", "r9b"}, offsetof(pt_regs, r9)},
    {{"r10", "r10d", "r10w", "r10b"}, offsetof(pt_regs, r10)},
    {{"r11", "r11d", "r11w", "r11b"}, offsetof(pt_regs, r11)},
    {{"r12", "r12d", "r12w", "r12b"}, offsetof(pt_regs, r12)},
    {{"r13", "r13d", "r13w", "r13b"}, offsetof(pt_regs, r13)},
    {{"r14", "r14d", "r14w", "r14b"}, offsetof(pt_regs, r14)},
    {{"r15", "r15d", "r15w", "r15b"}, offsetof(pt_regs, r15)},
};

std::optional<short> register_offset(const std::string& name) {
  for (const auto& r : kRegisters)
    for (const char* n : r.names)
      if (*n && name == n) return static_cast<short>(r.offset);
  return std::nullopt;
}

// A whole string as a signed decimal (gcc writes offsets and constants so).
bool parse_long(const std::string& s, long* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *out = v;
  return true;
}

// "$5", "%edi", "-16(%rbp)", "(%rax)" -> the argument's location.
bool parse_location(const std::string& loc, atrace_usdt_arg_spec* a) {
  long value = 0;
  if (loc.size() > 1 && loc[0] == '$') {
    if (!parse_long(loc.substr(1), &value)) return false;
    a->arg_type = ATRACE_USDT_ARG_CONST;
    a->val_off = static_cast<uint64_t>(value);
    return true;
  }
  if (loc.size() > 1 && loc[0] == '%') {
    auto off = register_offset(loc.substr(1));
    if (!off) return false;
    a->arg_type = ATRACE_USDT_ARG_REG;
    a->reg_off = *off;
    return true;
  }
  const size_t open = loc.find('(');
  if (open == std::string::npos || loc.back() != ')' || loc.compare(open, 2, "(%") != 0)
    return false;
  // An index register ("8(%rax,%rbx,4)") is beyond what usdt.bpf.h reads.
  auto reg = register_offset(loc.substr(open + 2, loc.size() - open - 3));
  if (!reg || (open > 0 && !parse_long(loc.substr(0, open), &value))) return false;
  a->arg_type = ATRACE_USDT_ARG_REG_DEREF;
  a->reg_off = *reg;
  a->val_off = static_cast<uint64_t>(value);
  return true;
}

}  // namespace

std::optional<atrace_usdt_spec> usdt_bpf_spec(const uprobes::UsdtProbe& site, uint64_t cookie,
                                              std::string* error) {
  atrace_usdt_spec spec{};
  spec.usdt_cookie = cookie;
  if (site.arg_list.size() > ATRACE_USDT_SPEC_ARGS) {
    *error = "more than " + std::to_string(ATRACE_USDT_SPEC_ARGS) + " arguments";
    return std::nullopt;
  }
  for (size_t i = 0; i < site.arg_list.size(); i++) {
    const auto& arg = site.arg_list[i];
    atrace_usdt_arg_spec& a = spec.args[i];
    if (!parse_location(arg.location, &a)) {
      *error = "argument " + std::to_string(i + 1) + " at '" + arg.location +
               "', a location atrace cannot read";
      return std::nullopt;
    }
    a.arg_signed = arg.is_signed;
    a.arg_bitshift = static_cast<char>(64 - 8 * arg.size);
  }
  spec.arg_cnt = static_cast<short>(site.arg_list.size());
  return spec;
}

std::optional<uint32_t> UsdtSpecTable::add(const uprobes::UsdtProbe& site, uint64_t cookie,
                                           std::string* error) {
  auto spec = usdt_bpf_spec(site, cookie, error);
  if (!spec) return std::nullopt;
  std::string key(reinterpret_cast<const char*>(&*spec), sizeof *spec);
  if (auto it = ids_.find(key); it != ids_.end()) return it->second;
  const auto id = static_cast<uint32_t>(ids_.size());
  if (id >= capacity_) {
    *error = "more than " + std::to_string(capacity_) + " distinct USDT argument specs";
    return std::nullopt;
  }
  if (bpf_map_update_elem(map_fd_, &id, &*spec, BPF_ANY) != 0) {
    *error = std::string("cannot store the argument spec: ") + base::errno_text(errno);
    return std::nullopt;
  }
  ids_.emplace(std::move(key), id);
  return id;
}

}  // namespace atrace
