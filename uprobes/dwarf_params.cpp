#include "uprobes/dwarf_params.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>

#include <memory>

#include "base/unique_fd.h"
#include "uprobes/build_id.h"
#include "uprobes/debug_symbols.h"
#include "uprobes/elf_file.h"
#include "uprobes/process_root.h"

namespace atrace::uprobes {

namespace {

struct DwarfDeleter {
  void operator()(Dwarf* d) const { dwarf_end(d); }
};
using DwarfPtr = std::unique_ptr<Dwarf, DwarfDeleter>;

// A file's DWARF, with its fd (libdw reads through it until dwarf_end).
struct DwarfFile {
  UniqueFd fd;
  DwarfPtr dw;
};

DwarfFile open_dwarf(const std::string& path) {
  DwarfFile f;
  f.fd = UniqueFd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (f.fd.get() >= 0) f.dw.reset(dwarf_begin(f.fd.get(), DWARF_C_READ));
  return f;
}

// The file itself, or its separate debug file (Debian's -dbgsym packages):
// the process's own first (a container's), then the host's, which the
// build id makes as good.
DwarfFile debug_info_of(const std::string& path, const std::string& build_id) {
  DwarfFile f = open_dwarf(path);
  if (f.dw) return f;
  // Where the distribution keeps it (debug_symbols.h: by build id, by
  // debuglink, the process's root first), of this very build.
  detail::ElfFile file(path);
  if (!file.elf()) return f;
  for (const auto& c : detail::debug_file_candidates(path, file.elf())) {
    if (!build_id.empty() && read_build_id(c) != build_id) continue;
    f = open_dwarf(c);
    if (f.dw) return f;
  }
  return f;
}

struct Search {
  uint64_t address = 0;
  Dwarf_Die found{};
  bool ok = false;
};

int match_function(Dwarf_Die* die, void* arg) {
  auto* s = static_cast<Search*>(arg);
  Dwarf_Addr low = 0;
  if (dwarf_lowpc(die, &low) == 0 && low == s->address) {
    s->found = *die;
    s->ok = true;
    return DWARF_CB_ABORT;
  }
  return DWARF_CB_OK;
}

// The subprogram DIE whose code starts at `address`: in the unit the
// address ranges name, else in any unit (not every compiler writes them).
std::optional<Dwarf_Die> function_die(Dwarf* dw, uint64_t address) {
  Search s;
  s.address = address;
  Dwarf_Die cu;
  if (dwarf_addrdie(dw, address, &cu)) {
    dwarf_getfuncs(&cu, match_function, &s, 0);
    if (s.ok) return s.found;
  }
  Dwarf_Off off = 0, next = 0;
  size_t header = 0;
  while (dwarf_nextcu(dw, off, &next, &header, nullptr, nullptr, nullptr) == 0) {
    if (dwarf_offdie(dw, off + header, &cu)) {
      dwarf_getfuncs(&cu, match_function, &s, 0);
      if (s.ok) return s.found;
    }
    off = next;
  }
  return std::nullopt;
}

std::optional<Dwarf_Die> type_of(Dwarf_Die* die) {
  Dwarf_Attribute a;
  Dwarf_Die t;
  if (!dwarf_attr_integrate(die, DW_AT_type, &a) || !dwarf_formref_die(&a, &t)) return std::nullopt;
  return t;
}

// Typedefs and qualifiers taken off.
std::optional<Dwarf_Die> peeled_type_of(Dwarf_Die* die) {
  auto t = type_of(die);
  if (!t) return std::nullopt;
  Dwarf_Die out;
  if (dwarf_peel_type(&*t, &out) != 0) return std::nullopt;
  return out;
}

Dwarf_Word encoding_of(Dwarf_Die* base) {
  Dwarf_Attribute a;
  Dwarf_Word enc = 0;
  if (!dwarf_attr_integrate(base, DW_AT_encoding, &a) || dwarf_formudata(&a, &enc) != 0) return 0;
  return enc;
}

bool is_aggregate(int tag) {
  return tag == DW_TAG_structure_type || tag == DW_TAG_union_type || tag == DW_TAG_class_type;
}

std::string type_name(Dwarf_Die* die) {
  auto t = type_of(die);
  if (!t) return "?";
  const char* n = dwarf_diename(&*t);
  if (n) return n;
  switch (dwarf_tag(&*t)) {
    case DW_TAG_pointer_type: return "pointer";
    case DW_TAG_structure_type: return "struct";
    case DW_TAG_union_type: return "union";
    default: return "?";
  }
}

// How a parameter travels.
enum class Class { Integer, Xmm, Stack, TwoRegisters, SmallAggregate, Unknown };

struct Param {
  Class cls = Class::Unknown;
  ValueType type;
};

Param classify(Dwarf_Die* param, unsigned strings) {
  Param p;
  auto t = peeled_type_of(param);
  if (!t) return p;
  const int tag = dwarf_tag(&*t);
  const int size = dwarf_bytesize(&*t);
  switch (tag) {
    case DW_TAG_pointer_type:
    case DW_TAG_reference_type:
    case DW_TAG_rvalue_reference_type: {
      p.cls = Class::Integer;
      p.type.is_signed = false;
      p.type.format = formats::ArgFormat::Pointer;
      auto to = peeled_type_of(&*t);
      if (tag == DW_TAG_pointer_type && to && dwarf_tag(&*to) == DW_TAG_base_type &&
          dwarf_bytesize(&*to) == 1 && strings < kMaxStringArgs) {
        Dwarf_Word enc = encoding_of(&*to);
        if (enc == DW_ATE_signed_char || enc == DW_ATE_unsigned_char) {
          p.type.is_string = true;
          p.type.format = formats::ArgFormat::Decimal;
        }
      }
      return p;
    }
    case DW_TAG_base_type: {
      Dwarf_Word enc = encoding_of(&*t);
      if (enc == DW_ATE_float || enc == DW_ATE_complex_float || enc == DW_ATE_decimal_float) {
        p.cls = size > 8 && enc == DW_ATE_float ? Class::Stack : Class::Xmm;  // long double
        return p;
      }
      if (size == 16) {
        p.cls = Class::TwoRegisters;  // __int128
        return p;
      }
      if (size != 1 && size != 2 && size != 4 && size != 8) return p;
      p.cls = Class::Integer;
      p.type.size = static_cast<uint8_t>(size);
      p.type.is_signed = enc == DW_ATE_signed || enc == DW_ATE_signed_char;
      return p;
    }
    case DW_TAG_enumeration_type: {
      if (size != 1 && size != 2 && size != 4 && size != 8) return p;
      p.cls = Class::Integer;
      p.type.size = static_cast<uint8_t>(size);
      auto under = peeled_type_of(&*t);
      Dwarf_Word enc = under ? encoding_of(&*under) : Dwarf_Word{DW_ATE_signed};
      p.type.is_signed = enc == DW_ATE_signed || enc == DW_ATE_signed_char;
      return p;
    }
    default:
      if (is_aggregate(tag)) p.cls = size > 16 ? Class::Stack : Class::SmallAggregate;
      return p;
  }
}

}  // namespace

std::optional<DwarfParams> dwarf_params(const std::string& path, const std::string& build_id,
                                        uint64_t address) {
  DwarfFile f = debug_info_of(path, build_id);
  if (!f.dw) return std::nullopt;
  auto fn = function_die(f.dw.get(), address);
  if (!fn) return std::nullopt;
  DwarfParams out;
  unsigned next = 0, strings = 0;  // the next integer register (0 = rdi)
  // A struct returned in memory: its address goes in rdi.
  if (auto ret = peeled_type_of(&*fn);
      ret && is_aggregate(dwarf_tag(&*ret)) && dwarf_bytesize(&*ret) > 16)
    next = 1;
  bool lost_track = false;
  std::string after;
  Dwarf_Die child;
  if (dwarf_child(&*fn, &child) != 0) return out;
  unsigned index = 0;
  do {
    if (dwarf_tag(&child) != DW_TAG_formal_parameter) continue;
    index++;
    const char* n = dwarf_diename(&child);
    const std::string name = n ? n : "arg" + std::to_string(index);
    const std::string what = name + " (" + type_name(&child) + ")";
    if (lost_track) {
      out.notes.push_back(what + ": after " + after + ", its register is not known; left out");
      continue;
    }
    Param p = classify(&child, strings);
    switch (p.cls) {
      case Class::Integer:
        if (next >= formats::kMaxFuncArgs) {
          out.notes.push_back(what + ": on the stack (past the sixth integer register); left out");
          break;
        }
        if (p.type.is_string) strings++;
        out.args.push_back(ArgSpec{static_cast<uint8_t>(next + 1), p.type, name});
        next++;
        break;
      case Class::Xmm: out.notes.push_back(what + ": in an XMM register; left out"); break;
      case Class::Stack: out.notes.push_back(what + ": on the stack; left out"); break;
      case Class::TwoRegisters:
        out.notes.push_back(what + ": 16 bytes in two registers; left out");
        next += 2;
        break;
      case Class::SmallAggregate:
      case Class::Unknown:
        out.notes.push_back(what + ": passed by value, not read; left out");
        lost_track = true;
        after = name;
        break;
    }
  } while (dwarf_siblingof(&child, &child) == 0);
  return out;
}

}  // namespace atrace::uprobes
