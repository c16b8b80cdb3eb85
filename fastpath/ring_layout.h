// The memory the fast path shares with a traced process (docs/fast-path.md):
// one region of the target's address space that the trampolines in the
// target write (entry and exit records, per-thread shadow stacks) and atrace
// reads. This header is the contract between the code the trampolines are
// generated from (fastpath/trampoline.h) and atrace's reader; every field
// has a fixed offset, checked below, because the trampolines address them
// as immediates.
//
// Layout of the region (all offsets from its start, all page-aligned), and
// how each part is mapped in the target (record/fast_path.cpp):
//   RingHeader                          one page     private, MADV_WIPEONFORK
//   LaneHeader[lane_count]              one cache line each  \ shared with
//   FastRecord[lane_count][lane_slots]  the lanes' records   / atrace (memfd)
//   ThreadSlot[thread_slots]            per-thread state     private
//
// The lanes are a memfd mapped MAP_SHARED by the target and by atrace, so
// they outlive the process: atrace reads what a process wrote just before
// it exited. The shadow stacks stay private, so a fork child returns
// through its own copy. A fork child also inherits the shared lanes, and
// its threads have the same thread pointers as its parent's: the
// trampolines write a record only while RingHeader::gate is not 0, and the
// header page is wiped in a fork child (MADV_WIPEONFORK), so a child's
// calls go unrecorded (counted in RingHeader::ungated) while its returns
// stay hooked and unhooked through its own shadow stacks, until atrace
// (--follow-forks) gives the child lanes and a header of its own. Memfd pages cost nothing until a
// writer touches them: a lane uses memory only as far as it has been written.
//
// Writers never wait: a full lane drops the record and counts it in
// LaneHeader::lost; a full thread table or a full shadow stack records the
// entry without hooking its return (kind EntryNoExit), so the return is never
// lost track of and the program never depends on atrace having room.
#pragma once

#include <cstddef>
#include <cstdint>

namespace atrace::fastpath {

inline constexpr uint64_t kRingMagic = 0x3154534146525441ull;  // "ATRFAST1"
inline constexpr uint32_t kRingVersion = 3;                    // 2: RingHeader::gate, 3: ungated

// What a record says happened. The values are written by generated code.
enum class RecordKind : uint16_t {
  Entry = 1,        // the function was entered; its return is hooked
  Exit = 2,         // it returned through the return stub
  EntryNoExit = 3,  // entered, return not hooked (thread table or shadow stack full)
  Unwound = 4,      // left (longjmp, a frame found gone): its shadow entry was dropped
  Caught = 5,       // a C++ exception unwound it: dropped at the catch (or the resume)
  ThreadExit = 6,   // a forced unwind (pthread_exit, cancellation) unwound it
  Switched = 7,     // its return address was given back at a stack switch
                    // and its return is not seen: counted, not timed
  GivenBack = 8,    // its return address was given back to a stack walk it was not
                    // re-armed after (left by longjmp, an end not patched): the same
};

// One event: 32 bytes, written by a trampoline into a lane slot it reserved
// with a compare-and-swap on LaneHeader::head. `seq` is written last, with
// release order: the reader takes a slot when seq == its index + 1.
struct FastRecord {
  uint64_t seq;             // slot index in the lane + 1, the commit mark
  uint64_t tsc;             // rdtscp at the event
  uint64_t thread_pointer;  // %fs:0, the thread's TCB: mapped to a tid by atrace
  uint32_t function_id;     // atrace's probe id of the function
  uint16_t kind;            // RecordKind
  uint16_t depth;           // the thread's shadow-stack depth after the event
};
static_assert(sizeof(FastRecord) == 32);

// A lane, one per CPU (the CPU from rdtscp's TSC_AUX, masked by lane_count -
// 1). head is written by the trampolines only, tail by atrace only, lost by
// the trampolines (lock xadd); each on its own cache line.
struct alignas(64) LaneHeader {
  uint64_t head;  // slots reserved so far
  uint64_t pad0[7];
  uint64_t tail;  // slots consumed by atrace
  uint64_t pad1[7];
  uint64_t lost;  // records dropped because the lane was full
  uint64_t pad2[7];
};
static_assert(sizeof(LaneHeader) == 192);

// One frame of a thread's shadow stack: the return address the trampoline
// replaced, and where it was (the stack slot, i.e. %rsp at the function's
// entry), so that the return stub finds its frame by stack position even
// after a longjmp or an unwind skipped frames above it.
struct ShadowFrame {
  uint64_t return_address;
  uint64_t stack_slot;
  uint32_t function_id;
  // 0 while armed (the slot holds the return stub); an unwinder's hook that
  // gave the return address back sets the RecordKind the frame is recorded
  // with when it leaves (Caught, GivenBack); a catch re-arms it (0 again).
  uint32_t flags;
};
static_assert(sizeof(ShadowFrame) == 24);

// Per-thread state, claimed by a compare-and-swap of thread_pointer from 0
// (open addressing by a hash of the thread pointer). A thread pointer can be
// reused after a thread ends (glibc caches stacks): the frames a dead thread
// left sit below the new thread's and are never matched by stack position.
struct ThreadSlot {
  uint64_t thread_pointer;  // 0: free
  uint32_t depth;           // frames in use
  uint32_t reserved;
  ShadowFrame frames[1];  // shadow_depth of them (RingHeader)
};

// The first page. Written by atrace before any trampoline is reachable;
// read-only for the trampolines afterwards (they use immediates; the header
// is for the reader and for a human looking at the mapping), except `gate`,
// which every record reads first: 0 (a fork child's wiped page) means
// "write nothing".
struct RingHeader {
  uint64_t magic;         // kRingMagic
  uint32_t version;       // kRingVersion
  uint32_t lane_count;    // power of two
  uint32_t lane_slots;    // power of two, records per lane
  uint32_t thread_slots;  // power of two
  uint32_t shadow_depth;  // frames per thread slot
  uint32_t reserved;
  uint64_t lanes_offset;    // LaneHeader[lane_count]
  uint64_t records_offset;  // FastRecord[lane_count * lane_slots]
  uint64_t threads_offset;  // thread_slots slots of thread_slot_bytes() each
  uint64_t total_bytes;
  uint64_t gate;  // 1 in the traced process, 0 in its fork children (until given a ring)
  // Calls (entries) made while the gate was 0: a fork child's before atrace
  // gave it a ring of its own (record/fast_path.cpp, adopt); atrace reads
  // it there and says how many went unrecorded.
  uint64_t ungated;
};
static_assert(offsetof(RingHeader, gate) == 64);
static_assert(offsetof(RingHeader, ungated) == 72);

// Sizes and offsets of a region with these parameters (all powers of two,
// checked by make_layout).
struct RingGeometry {
  uint32_t lane_count = 8;
  uint32_t lane_slots = 1u << 16;
  uint32_t thread_slots = 256;
  uint32_t shadow_depth = 1024;
};

inline constexpr uint64_t thread_slot_bytes(uint32_t shadow_depth) {
  return (offsetof(ThreadSlot, frames) + uint64_t{shadow_depth} * sizeof(ShadowFrame) + 63) &
         ~uint64_t{63};
}

// The header for a region of this geometry (offsets and total size); throws
// std::invalid_argument for a geometry that is not powers of two.
RingHeader make_layout(const RingGeometry& geometry);

}  // namespace atrace::fastpath
