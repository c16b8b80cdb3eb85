// Code regions and per-function trampolines (trampoline.h).
#include "fastpath/trampoline.h"

#include <cpuid.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

#include "fastpath/trampoline_template.h"
#include "uprobes/placement.h"

namespace atrace::fastpath {

namespace {

constexpr size_t kAlign = 16;
constexpr uint8_t kInt3 = 0xcc;

void store64(uint8_t* at, uint64_t v) { std::memcpy(at, &v, 8); }

bool rel32(uint64_t from_next, uint64_t to, int32_t* out) {
  const int64_t d = static_cast<int64_t>(to - from_next);
  if (d < std::numeric_limits<int32_t>::min() || d > std::numeric_limits<int32_t>::max())
    return false;
  *out = static_cast<int32_t>(d);
  return true;
}

void put_rel32(std::vector<uint8_t>& out, int32_t v) {
  uint8_t b[4];
  std::memcpy(b, &v, 4);
  out.insert(out.end(), b, b + 4);
}

}  // namespace

std::string name_refusal(std::string_view name) {
  // Functions that return twice, or whose caller's frame they save as a
  // context to resume: the second return would find its frame popped.
  static constexpr std::string_view kReturnsTwice[] = {
      "setjmp",  "_setjmp",      "sigsetjmp",  "__sigsetjmp",  "savectx",     "vfork",
      "__vfork", "__libc_vfork", "getcontext", "__getcontext", "swapcontext", "__swapcontext",
  };
  // Entered without a return address at [rsp]: the program's and the
  // loader's entry points, the start of a makecontext context, and the
  // signal return trampoline (the unwinder also recognises it by its bytes).
  static constexpr std::string_view kNoReturnAddress[] = {
      "_start", "_dl_start", "_dl_start_user", "__start_context", "__restore_rt",
  };
  for (auto n : kReturnsTwice)
    if (name == n) return "returns twice: its second return would find no shadow frame";
  for (auto n : kNoReturnAddress)
    if (name == n) return "entered without a return address on the stack";
  return "";
}

std::string fast_path_refusal(std::string_view name, const uint8_t* code, size_t len,
                              uint64_t vaddr, const uprobes::CodeEntries& entries, bool whole) {
  std::string why = name_refusal(name);
  if (!why.empty()) return why;
  RelocatedEntry moved = relocate_entry(code, len, vaddr, vaddr, whole);
  if (!moved.ok()) return std::move(moved.refusal);
  return entry_branch_refusal(entries, vaddr, moved.replaced);
}

bool is_unwinder_entry(std::string_view name) {
  static constexpr std::string_view kUnwinders[] = {
      "_Unwind_RaiseException",    "_Unwind_ForcedUnwind", "_Unwind_Resume",
      "_Unwind_Resume_or_Rethrow", "_Unwind_Backtrace",
  };
  return std::find(std::begin(kUnwinders), std::end(kUnwinders), name) != std::end(kUnwinders);
}

TrampolineKind unwinder_kind(std::string_view name) {
  static constexpr std::pair<std::string_view, TrampolineKind> kKinds[] = {
      {"_Unwind_RaiseException", TrampolineKind::Unwinder},
      {"_Unwind_Resume", TrampolineKind::Unwinder},
      {"_Unwind_Resume_or_Rethrow", TrampolineKind::Unwinder},
      {"_Unwind_ForcedUnwind", TrampolineKind::ForcedUnwind},
      {"_Unwind_Backtrace", TrampolineKind::Walk},
      {"__cxa_begin_catch", TrampolineKind::Catch},
      {"_Unwind_DeleteException", TrampolineKind::Catch},
      {"swapcontext", TrampolineKind::Switch},
      {"__swapcontext", TrampolineKind::Switch},
      {"setcontext", TrampolineKind::Switch},
      {"__setcontext", TrampolineKind::Switch},
  };
  for (const auto& [n, kind] : kKinds)
    if (n == name) return kind;
  return TrampolineKind::Traced;
}

TscRead best_tsc_read() {
  unsigned a, b, c, d;
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d) && (c & (1u << 22))) return TscRead::RdtscRdpid;
  return TscRead::Rdtscp;
}

CodeRegion::CodeRegion(uint8_t* buf, size_t size, uint64_t address, const RingHeader& layout,
                       uint64_t ring_address, uint64_t shared_stub, TscRead tsc)
    : buf_(buf), size_(size), address_(address) {
  const tmpl::Template& t = tmpl::get();
  if (size < t.size) throw std::invalid_argument("fast-path code region smaller than its code");
  std::memset(buf, kInt3, size);
  std::memcpy(buf, t.bytes, t.size);
  store64(buf + tmpl::kLanes, ring_address + layout.lanes_offset);
  store64(buf + tmpl::kRecords, ring_address + layout.records_offset);
  store64(buf + tmpl::kThreads, ring_address + layout.threads_offset);
  store64(buf + tmpl::kSlotBytes, thread_slot_bytes(layout.shadow_depth));
  store64(buf + tmpl::kLaneMask, layout.lane_count - 1u);
  store64(buf + tmpl::kLaneSlots, layout.lane_slots);
  store64(buf + tmpl::kSlotMask, layout.lane_slots - 1u);
  store64(buf + tmpl::kThreadMask, layout.thread_slots - 1u);
  store64(buf + tmpl::kDepth, layout.shadow_depth);
  store64(buf + tmpl::kGate, ring_address + offsetof(RingHeader, gate));
  entry_ = address + t.entry;
  unwind_ = address + t.unwind;
  stub_ = shared_stub ? shared_stub : address + t.stub;
  store64(buf + tmpl::kStub, stub_);
  if (tsc == TscRead::RdtscRdpid)
    std::memcpy(buf + t.tsc, tmpl::kRdtscRdpid, sizeof tmpl::kRdtscRdpid);
  used_ = t.size;
}

PatchPlan CodeRegion::add(const uint8_t* code, size_t len, uint64_t function, uint32_t function_id,
                          TrampolineKind kind, bool whole) {
  PatchPlan plan;
  const size_t start = (used_ + kAlign - 1) & ~(kAlign - 1);
  const uint64_t tramp = address_ + start;

  std::vector<uint8_t> out;
  const bool mid_function = kind == TrampolineKind::WalkEnd;
  if (mid_function) {
    out.insert(out.end(), {0x48, 0x8d, 0x64, 0x24, 0x80});  // lea -128(%rsp),%rsp
    out.push_back(0x9c);                                    // pushfq
  }
  // push $imm32 (sign-extended: the low 32 bits are the id, or the
  // unwinder hook's mode)
  out.push_back(0x68);
  const bool traced = kind == TrampolineKind::Traced;
  put_rel32(out, static_cast<int32_t>(traced ? function_id : static_cast<uint32_t>(kind)));
  int32_t d = 0;
  const uint64_t callee = traced ? entry_ : unwind_;
  rel32(tramp + out.size() + 5, callee, &d);  // within the region: always fits
  out.push_back(0xe8);
  put_rel32(out, d);
  out.insert(out.end(), {0x48, 0x8d, 0x64, 0x24, 0x08});  // lea 8(%rsp),%rsp
  if (mid_function) {
    out.push_back(0x9d);                                                      // popfq
    out.insert(out.end(), {0x48, 0x8d, 0xa4, 0x24, 0x80, 0x00, 0x00, 0x00});  // lea 128(%rsp),%rsp
  }

  RelocatedEntry moved = relocate_entry(code, len, function, tramp + out.size(), whole);
  if (!moved.ok()) {
    plan.refusal = std::move(moved.refusal);
    return plan;
  }
  out.insert(out.end(), moved.code.begin(), moved.code.end());
  int32_t to_tramp;
  if (!rel32(function + kJumpBytes, tramp, &to_tramp)) {
    plan.refusal = "the code region is out of rel32 reach of the function";
    return plan;
  }
  if (start + out.size() > size_) {
    plan.refusal = "the code region is full";
    return plan;
  }
  std::memcpy(buf_ + start, out.data(), out.size());
  used_ = start + out.size();

  plan.trampoline = tramp;
  plan.replaced = moved.replaced;
  plan.jump[0] = 0xe9;
  std::memcpy(&plan.jump[1], &to_tramp, 4);
  return plan;
}

}  // namespace atrace::fastpath
