// Entry-probe placement (see placement.h): Zydis decodes the functions and
// the module; uprobes/insn_class.h says what the kernel does with the probed
// instruction.
#include "uprobes/placement.h"

#include <Zydis/Zydis.h>
#include <gelf.h>

#include <algorithm>

#include "uprobes/elf_file.h"
#include "uprobes/insn_class.h"

namespace atrace::uprobes {

namespace {

using formats::ProbePath;

// At most this many instructions before the probe: straight-line code that
// touches no stack is short in compiled prologues (endbr64, a few movs), and
// the prefix's time falls outside the measured call.
constexpr int kMaxPrefix = 16;

// Lower is cheaper (kernel-notes/emulated-vs-single-step.md).
int cost(ProbePath p) {
  switch (p) {
    case ProbePath::Nop5: return 0;
    case ProbePath::Emulated: return 1;
    case ProbePath::SingleStep: return 2;
    case ProbePath::Refused: return 3;
    case ProbePath::Patched:  // never a kernel probe's path
    case ProbePath::Unknown: break;
  }
  return 4;
}

struct Decoder {
  ZydisDecoder d;
  Decoder() { ZydisDecoderInit(&d, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64); }
};

bool is_rsp(ZydisRegister r) {
  return r != ZYDIS_REGISTER_NONE &&
         ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, r) == ZYDIS_REGISTER_RSP;
}

// Reads or writes the stack pointer, explicitly or not (push, pop, call, ret,
// enter, leave, pushf, a memory operand based on %rsp, ...).
bool touches_rsp(const ZydisDecodedInstruction& insn, const ZydisDecodedOperand* ops) {
  for (uint8_t i = 0; i < insn.operand_count; ++i) {
    const ZydisDecodedOperand& o = ops[i];
    if (o.type == ZYDIS_OPERAND_TYPE_REGISTER && is_rsp(o.reg.value)) return true;
    if (o.type == ZYDIS_OPERAND_TYPE_MEMORY && (is_rsp(o.mem.base) || is_rsp(o.mem.index)))
      return true;
  }
  return false;
}

// May leave the straight line: branches, calls, returns, traps, system
// instructions, anything that writes %rip.
bool changes_flow(const ZydisDecodedInstruction& insn, const ZydisDecodedOperand* ops) {
  switch (insn.meta.category) {
    case ZYDIS_CATEGORY_COND_BR:
    case ZYDIS_CATEGORY_UNCOND_BR:
    case ZYDIS_CATEGORY_CALL:
    case ZYDIS_CATEGORY_RET:
    case ZYDIS_CATEGORY_INTERRUPT:
    case ZYDIS_CATEGORY_SYSCALL:
    case ZYDIS_CATEGORY_SYSRET:
    case ZYDIS_CATEGORY_SYSTEM: return true;
    default: break;
  }
  switch (insn.mnemonic) {
    case ZYDIS_MNEMONIC_UD0:
    case ZYDIS_MNEMONIC_UD1:
    case ZYDIS_MNEMONIC_UD2:
    case ZYDIS_MNEMONIC_HLT:
    case ZYDIS_MNEMONIC_XBEGIN:
    case ZYDIS_MNEMONIC_XABORT:
    case ZYDIS_MNEMONIC_XEND: return true;
    default: break;
  }
  for (uint8_t i = 0; i < insn.operand_count; ++i)
    if (ops[i].type == ZYDIS_OPERAND_TYPE_REGISTER && ops[i].reg.value == ZYDIS_REGISTER_RIP &&
        (ops[i].actions & ZYDIS_OPERAND_ACTION_MASK_WRITE))
      return true;
  return false;
}

// Where a relative branch or a RIP-relative operand points (address of the
// instruction `at`), if it has one.
bool relative_target(const ZydisDecodedInstruction& insn, uint64_t at, uint64_t* out) {
  if (!(insn.attributes & ZYDIS_ATTRIB_IS_RELATIVE)) return false;
  const uint64_t next = at + insn.length;
  for (const auto& imm : insn.raw.imm) {
    if (imm.size && imm.is_relative) {
      *out = next + static_cast<uint64_t>(imm.value.s);
      return true;
    }
  }
  // A RIP-relative memory operand (mod 00, r/m 101 in 64-bit mode).
  if ((insn.attributes & ZYDIS_ATTRIB_HAS_MODRM) && insn.raw.modrm.mod == 0 &&
      insn.raw.modrm.rm == 5) {
    *out = next + static_cast<uint64_t>(insn.raw.disp.value);
    return true;
  }
  return false;
}

bool is_indirect_jump(const ZydisDecodedInstruction& insn) {
  return insn.meta.category == ZYDIS_CATEGORY_UNCOND_BR &&
         !(insn.attributes & ZYDIS_ATTRIB_IS_RELATIVE);
}

}  // namespace

ProbePath path_at(const uint8_t* code, size_t len, uint64_t offset, bool nop5_supported) {
  ProbePath p = classify_entry(code, len);
  // The kernel optimizes a NOP5 only when it does not cross a page (file
  // offsets and addresses are congruent modulo the page size).
  constexpr uint64_t kPage = 4096;
  if (p == ProbePath::Nop5 && (!nop5_supported || offset % kPage > kPage - 5))
    p = ProbePath::Emulated;
  return p;
}

EntryPlacement place_entry(const uint8_t* code, size_t len, uint64_t offset, bool nop5_supported,
                           bool whole) {
  const EntryPlacement at_start{0, path_at(code, len, offset, nop5_supported)};
  if (!code || len == 0 || !whole || at_start.path == ProbePath::Nop5) return at_start;
  static const Decoder dec;

  // The prefix, and the cheapest instruction at its end or in it.
  EntryPlacement best = at_start;
  size_t pos = 0;
  for (int n = 0; n <= kMaxPrefix && pos < len; ++n) {
    ZydisDecodedInstruction insn;
    ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
    if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec.d, code + pos, len - pos, &insn, ops))) break;
    if (pos > 0) {
      ProbePath p = path_at(code + pos, len - pos, offset + pos, nop5_supported);
      if (cost(p) < cost(best.path)) best = {pos, p};
      if (p == ProbePath::Nop5) break;
    }
    if (touches_rsp(insn, ops) || changes_flow(insn, ops)) break;
    pos += insn.length;
  }
  if (best.delta == 0) return at_start;

  // The whole function: nothing of it may enter (0, delta], and it may not
  // jump where the code does not say.
  for (size_t at = 0; at < len;) {
    ZydisDecodedInstruction insn;
    if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&dec.d, nullptr, code + at, len - at, &insn)))
      return at_start;
    if (is_indirect_jump(insn)) return at_start;
    uint64_t target;
    if (relative_target(insn, at, &target) && target > 0 && target <= best.delta) return at_start;
    at += insn.length;
  }
  return best;
}

CodeEntries::CodeEntries(const std::string& path, std::vector<uint64_t> function_starts)
    : entries_(std::move(function_starts)) {
  std::sort(entries_.begin(), entries_.end());
  detail::ElfFile file(path);
  Elf* elf = file.elf();
  size_t nph = 0;
  if (!elf || elf_getphdrnum(elf, &nph) != 0) return;
  struct Exec {
    uint64_t vaddr, size;
  };
  std::vector<Exec> exec;
  const std::vector<uint64_t> starts = entries_;  // resynchronisation points
  static const Decoder dec;
  std::vector<uint8_t> buf;
  for (size_t i = 0; i < nph; ++i) {
    GElf_Phdr ph;
    if (!gelf_getphdr(elf, static_cast<int>(i), &ph) || ph.p_type != PT_LOAD ||
        !(ph.p_flags & PF_X))
      continue;
    exec.push_back({ph.p_vaddr, ph.p_memsz});
    buf.resize(ph.p_filesz);
    if (file.read_code(ph.p_offset, buf.data(), buf.size()) != buf.size()) return;
    // A linear sweep from the segment's start, restarted at every function
    // start so that data or padding cannot hide a function's branches.
    auto next_start = std::upper_bound(starts.begin(), starts.end(), ph.p_vaddr);
    for (size_t at = 0; at < buf.size();) {
      const uint64_t va = ph.p_vaddr + at;
      ZydisDecodedInstruction insn;
      if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&dec.d, nullptr, buf.data() + at,
                                                      buf.size() - at, &insn))) {
        ++at;
        continue;
      }
      while (next_start != starts.end() && *next_start <= va) ++next_start;
      if (next_start != starts.end() && *next_start < va + insn.length) {
        at = *next_start - ph.p_vaddr;  // overlaps a function start: decode from there
        continue;
      }
      uint64_t target;
      if (relative_target(insn, va, &target)) entries_.push_back(target);
      at += insn.length;
    }
  }
  // Code addresses the loader relocates: function pointers, computed-goto
  // tables (&&label), vtables.
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn))) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (!data || sh.sh_entsize == 0) continue;
    for (size_t k = 0; k < sh.sh_size / sh.sh_entsize; ++k) {
      GElf_Rela r;
      if (!gelf_getrela(data, static_cast<int>(k), &r)) break;
      if (GELF_R_TYPE(r.r_info) != R_X86_64_RELATIVE) continue;
      entries_.push_back(static_cast<uint64_t>(r.r_addend));
    }
  }
  // Only addresses in code matter.
  auto in_code = [&](uint64_t a) {
    for (const auto& e : exec)
      if (a >= e.vaddr && a - e.vaddr < e.size) return true;
    return false;
  };
  entries_.erase(
      std::remove_if(entries_.begin(), entries_.end(), [&](uint64_t a) { return !in_code(a); }),
      entries_.end());
  std::sort(entries_.begin(), entries_.end());
  entries_.erase(std::unique(entries_.begin(), entries_.end()), entries_.end());
  ok_ = true;
}

bool CodeEntries::any_in(uint64_t after, uint64_t upto) const {
  if (!ok_) return true;
  auto it = std::upper_bound(entries_.begin(), entries_.end(), after);
  return it != entries_.end() && *it <= upto;
}

}  // namespace atrace::uprobes
