// Relocating a function's entry (relocate.h), decoded with Zydis.
#include "fastpath/relocate.h"

#include <Zydis/Zydis.h>

#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#include "uprobes/placement.h"

namespace atrace::fastpath {

namespace {

struct Decoder {
  ZydisDecoder d;
  Decoder() { ZydisDecoderInit(&d, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64); }
};

const ZydisDecoder* decoder() {
  static const Decoder dec;
  return &dec.d;
}

bool fits_i32(int64_t v) {
  return v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max();
}

void put32(std::vector<uint8_t>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

void put64(std::vector<uint8_t>& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

// jmp *0(%rip); .quad target: reaches anywhere, touches no register.
void absolute_jump(std::vector<uint8_t>& out, uint64_t target) {
  out.insert(out.end(), {0xff, 0x25, 0, 0, 0, 0});
  put64(out, target);
}

std::string at(size_t pos) { return "+" + std::to_string(pos); }

// The relative immediate of a branch or call, if it has one.
using RawImm =
    std::remove_reference_t<decltype(std::declval<ZydisDecodedInstruction>().raw.imm[0])>;

const RawImm* relative_imm(const ZydisDecodedInstruction& insn) {
  for (const auto& imm : insn.raw.imm)
    if (imm.size && imm.is_relative) return &imm;
  return nullptr;
}

bool rip_relative_memory(const ZydisDecodedInstruction& insn) {
  return (insn.attributes & ZYDIS_ATTRIB_HAS_MODRM) && insn.raw.modrm.mod == 0 &&
         insn.raw.modrm.rm == 5;
}

// Where a relative branch or a RIP-relative operand of the instruction at
// `pc` points, if it has one.
bool relative_target(const ZydisDecodedInstruction& insn, uint64_t pc, uint64_t* out) {
  if (!(insn.attributes & ZYDIS_ATTRIB_IS_RELATIVE)) return false;
  const uint64_t next = pc + insn.length;
  if (const auto* imm = relative_imm(insn)) {
    *out = next + static_cast<uint64_t>(imm->value.s);
    return true;
  }
  if (rip_relative_memory(insn)) {
    *out = next + static_cast<uint64_t>(insn.raw.disp.value);
    return true;
  }
  return false;
}

// Appends the instruction at `pc` (bytes `bytes`), rewritten to run at
// `to_pc`; returns a refusal or "".
std::string relocate_one(const ZydisDecodedInstruction& insn, const uint8_t* bytes, uint64_t pc,
                         uint64_t to_pc, size_t pos, bool last, std::vector<uint8_t>& out) {
  if (!(insn.attributes & ZYDIS_ATTRIB_IS_RELATIVE)) {
    out.insert(out.end(), bytes, bytes + insn.length);
    return "";
  }
  const uint64_t next = pc + insn.length;
  // A transaction's abort address: no equivalent absolute form.
  if (insn.mnemonic == ZYDIS_MNEMONIC_XBEGIN) return "xbegin at " + at(pos) + " cannot be moved";
  if (const auto* imm = relative_imm(insn)) {
    const uint64_t target = next + static_cast<uint64_t>(imm->value.s);
    switch (insn.meta.category) {
      case ZYDIS_CATEGORY_UNCOND_BR: absolute_jump(out, target); return "";
      case ZYDIS_CATEGORY_COND_BR:
        // The condition over a 2-byte hop: taken -> the absolute jump to the
        // target; not taken -> `jmp +14` past it.
        if (imm->size == 8) {
          const size_t start = out.size();
          out.insert(out.end(), bytes, bytes + insn.length);
          out[start + imm->offset] = 2;
        } else if (insn.opcode >= 0x80 && insn.opcode <= 0x8f) {  // 0f 8x: jcc rel32
          out.push_back(static_cast<uint8_t>(0x70 | (insn.opcode & 0x0f)));
          out.push_back(2);
        } else {
          return "conditional branch at " + at(pos) + " cannot be moved";
        }
        out.insert(out.end(), {0xeb, 14});
        absolute_jump(out, target);
        return "";
      case ZYDIS_CATEGORY_CALL: {
        // The callee must return into the original code, after the call:
        // possible only when nothing after the call was overwritten.
        if (!last) return "call at " + at(pos) + " inside the replaced bytes";
        out.insert(out.end(), {0x48, 0x8d, 0x64, 0x24, 0xf8});  // lea -8(%rsp),%rsp
        out.insert(out.end(), {0xc7, 0x04, 0x24});              // movl $lo,(%rsp)
        put32(out, static_cast<uint32_t>(next));
        out.insert(out.end(), {0xc7, 0x44, 0x24, 0x04});  // movl $hi,4(%rsp)
        put32(out, static_cast<uint32_t>(next >> 32));
        absolute_jump(out, target);
        return "";
      }
      default: break;
    }
    return "relative instruction at " + at(pos) + " cannot be moved";
  }
  if (rip_relative_memory(insn) && insn.raw.disp.size == 32) {
    const uint64_t target = next + static_cast<uint64_t>(insn.raw.disp.value);
    const int64_t disp = static_cast<int64_t>(target - (to_pc + insn.length));
    if (!fits_i32(disp)) return "RIP-relative operand at " + at(pos) + " out of reach";
    const size_t start = out.size();
    out.insert(out.end(), bytes, bytes + insn.length);
    const uint32_t d = static_cast<uint32_t>(static_cast<int32_t>(disp));
    std::memcpy(&out[start + insn.raw.disp.offset], &d, 4);
    return "";
  }
  return "relative instruction at " + at(pos) + " cannot be moved";
}

}  // namespace

RelocatedEntry relocate_entry(const uint8_t* code, size_t len, uint64_t from, uint64_t to,
                              bool whole) {
  RelocatedEntry r;
  if (whole && len < kJumpBytes) {
    r.refusal = "shorter than the 5-byte jump (" + std::to_string(len) + " bytes)";
    return r;
  }
  // The instructions the jump overwrites.
  struct Insn {
    ZydisDecodedInstruction insn;
    size_t pos;
  };
  std::vector<Insn> insns;
  size_t pos = 0;
  while (pos < kJumpBytes) {
    ZydisDecodedInstruction insn;
    if (pos >= len || !ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(decoder(), nullptr, code + pos,
                                                                  len - pos, &insn))) {
      r.refusal = pos >= len ? "shorter than the 5-byte jump (" + std::to_string(len) + " bytes)"
                             : "cannot decode the instruction at " + at(pos);
      return r;
    }
    insns.push_back({insn, pos});
    pos += insn.length;
  }
  const size_t replaced = pos;

  // Nothing of the function may land inside the replaced bytes (a branch to
  // their start is fine: it meets the jump).
  const size_t scan = whole ? len : replaced;
  for (size_t p = 0; p < scan;) {
    ZydisDecodedInstruction insn;
    if (!ZYAN_SUCCESS(
            ZydisDecoderDecodeInstruction(decoder(), nullptr, code + p, scan - p, &insn))) {
      r.refusal = "cannot decode the function at " + at(p);
      return r;
    }
    uint64_t target;
    if (relative_target(insn, from + p, &target) && target > from && target < from + replaced) {
      r.refusal = "the instruction at " + at(p) + " branches into the replaced bytes (" +
                  at(target - from) + ")";
      return r;
    }
    p += insn.length;
  }

  for (size_t i = 0; i < insns.size(); ++i) {
    const Insn& in = insns[i];
    std::string why = relocate_one(in.insn, code + in.pos, from + in.pos, to + r.code.size(),
                                   in.pos, i + 1 == insns.size(), r.code);
    if (!why.empty()) {
      r.refusal = std::move(why);
      r.code.clear();
      return r;
    }
  }
  // Back to the first instruction not replaced (unreachable after a jmp, a
  // ret or a moved call, and harmless there).
  const uint64_t back = from + replaced;
  const int64_t rel = static_cast<int64_t>(back - (to + r.code.size() + 5));
  if (fits_i32(rel)) {
    r.code.push_back(0xe9);
    put32(r.code, static_cast<uint32_t>(static_cast<int32_t>(rel)));
  } else {
    absolute_jump(r.code, back);
  }
  r.replaced = replaced;
  return r;
}

std::string entry_branch_refusal(const uprobes::CodeEntries& entries, uint64_t vaddr,
                                 size_t replaced) {
  if (!entries.ok()) return "the module's code could not be read";
  if (replaced > 1 && entries.any_in(vaddr, vaddr + replaced - 1))
    return "a branch or code address of the module lands inside the replaced bytes";
  return "";
}

}  // namespace atrace::fastpath
