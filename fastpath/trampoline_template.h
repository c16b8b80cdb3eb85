// The code every fast-path code region starts with (trampoline_template.cpp,
// written in assembly): the routines the per-function trampolines call and
// the return stub, preceded by the constants they read. fastpath/trampoline.h
// copies it into a region and fills the constants in; nothing here runs in
// atrace itself (the bytes sit in .rodata).
#pragma once

#include <cstddef>
#include <cstdint>

namespace atrace::fastpath::tmpl {

// Offsets of the constants at the start of the template, filled by the
// generator (all 8 bytes; addresses are the target's).
inline constexpr size_t kLanes = 0;        // address of LaneHeader[0]
inline constexpr size_t kRecords = 8;      // address of FastRecord[0]
inline constexpr size_t kThreads = 16;     // address of the first ThreadSlot
inline constexpr size_t kSlotBytes = 24;   // thread_slot_bytes(shadow_depth)
inline constexpr size_t kLaneMask = 32;    // lane_count - 1
inline constexpr size_t kLaneSlots = 40;   // records per lane
inline constexpr size_t kSlotMask = 48;    // lane_slots - 1
inline constexpr size_t kThreadMask = 56;  // thread_slots - 1
inline constexpr size_t kDepth = 64;       // shadow_depth
inline constexpr size_t kStub = 72;        // the return stub every hooked frame returns to
inline constexpr size_t kGate = 80;        // address of RingHeader::gate (0: record nothing)
// The kernel's uretprobe trampoline (the start of the process's [uprobes]
// page; 0 while unknown): a call whose return address is that is not hooked
// (docs/fast-path.md, "Hot functions", design step 3).
inline constexpr size_t kUretprobe = 88;
inline constexpr size_t kDataBytes = 128;  // code starts here

// Where the template and its entry points are (offsets from its start).
struct Template {
  const uint8_t* bytes;
  size_t size;
  size_t entry;   // fp_entry: records an entry, hooks the return
  size_t unwind;  // fp_unwind: gives an unwinder the original return addresses
  size_t stub;    // fp_return: the return stub
  size_t tsc;     // the 6 bytes that read the TSC and the CPU: rdtscp; nopl (%rax)
};

// `rdtsc; rdpid %rcx`: the same edx:eax and ecx as rdtscp, in 6 bytes.
inline constexpr uint8_t kRdtscRdpid[6] = {0x0f, 0x31, 0xf3, 0x0f, 0xc7, 0xf9};

const Template& get();

}  // namespace atrace::fastpath::tmpl
