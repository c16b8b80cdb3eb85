// What a SIGKILLed recorder can lose: every event older than the kill by
// kKillLossBoundNs is in the file (docs/reliability.md, "What a kill
// loses"). A kill loses what is in atrace's memory; what write(2) handed to
// the kernel is in the page cache, which outlives the process (no fsync
// needed: only a crash of the machine loses that). An event waits, on its
// way there:
//
//   in its CPU's lane or ring   until the next drain      <= kMaxDrainPeriodNs
//     a fast-path record whose writer is held between reserving its slot
//     and committing it (preempted in the trampoline) is taken at the
//     first drain after it commits, or given up and counted lost once
//     reserved for kFastPathCommitWaitNs and found uncommitted by two
//     drains (fastpath/ring_reader.h): with the fast path's drains at most
//     half the wait apart (record/fast_path.h checks it), it reaches
//     atrace at most kFastPathCommitWaitNs + kMaxDrainPeriodNs after its
//     reservation; the reorder window holds the records after it that
//     long too (it releases nothing past a slot the reader waits at)
//   in the reorder window       until it is that old      kReorderWindowNs
//   in its thread's open block  until its oldest event is that old, at the
//                               next batch the writer gets (every drain,
//                               empty ones too)           kBlockMaxAgeNs
//
// A block's age counts from its oldest event's time stamp, so the first two
// waits run inside the third: an event is written at most
// max(kBlockMaxAgeNs, kFastPathCommitWaitNs + kMaxDrainPeriodNs +
// kReorderWindowNs) + kMaxDrainPeriodNs after it happened, 150 ms; the rest of the bound is for
// the writing itself and the scheduler. Written to disk this way, a thread
// of few events gets a block about every kBlockMaxAgeNs
// (docs/BENCHMARKS.md, "What a kill loses").
//
// The bound holds while atrace keeps up: a drain loop kept off the CPU
// leaves events in the buffers longer, and a write(2) held by the kernel
// (dirty-page throttling under another process's heavy writing) keeps the
// batches behind it in atrace's queue (async_writer.h) until it returns.
#pragma once

#include <algorithm>
#include <cstdint>

namespace atrace {

constexpr uint64_t kKillLossBoundNs = 250'000'000;

// The drain timer's longest period (bpf_session.cpp sizes it to the rings).
constexpr uint64_t kMaxDrainPeriodNs = 50'000'000;
// Records of one thread reach atrace through several CPUs' buffers: each is
// held this long to be put back in order (reorder.h).
constexpr uint64_t kReorderWindowNs = 20'000'000;
// A thread's open block is written once its oldest event is this old.
constexpr uint64_t kBlockMaxAgeNs = 100'000'000;
// How long the fast path's reader waits for a reserved slot's commit
// before it gives the slot up (fastpath/ring_reader.h). Other records are
// not held by it (the reader takes them past the slot): only the late
// writer's own record waits this long.
constexpr uint64_t kFastPathCommitWaitNs = 30'000'000;

constexpr uint64_t kWorstWriteDelayNs =
    std::max(kBlockMaxAgeNs, kFastPathCommitWaitNs + kMaxDrainPeriodNs + kReorderWindowNs) +
    kMaxDrainPeriodNs;
static_assert(kWorstWriteDelayNs + 100'000'000 <= kKillLossBoundNs,
              "keep 100 ms of the bound for the writing and the scheduler");

}  // namespace atrace
