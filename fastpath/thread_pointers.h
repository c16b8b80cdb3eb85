// Which thread wrote a fast-path record. The trampolines know a thread by
// its thread pointer (%fs:0, the TCB: equal to the thread's fs_base and to
// pthread_self() with glibc on x86-64), read without a system call; atrace's
// kernel events know it by tid. This maps (thread pointer, time) to a tid,
// from:
//   - the threads alive when the fast path was installed: their fs_base,
//     read with ptrace while they were stopped (fastpath/inject's
//     StoppedProcess keeps user_regs_struct.fs_base per thread);
//   - the threads created afterwards: the PROC_FORK event of each carries
//     the new task's fs_base (bpf/atrace_kernel.bpf.h, formats/FORMAT.md);
//   - the threads' ends: a thread's THREAD_EXIT frees its pointer.
// glibc reuses a finished thread's stack and TCB for a later thread, so one
// pointer names several threads over a recording: the map is by time. A
// pointer the map does not know at that time gives kUnknownTid, never a
// guess (a thread created while fork events were lost, or a program that
// moves its own fs_base: arch_prctl(ARCH_SET_FS)).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace atrace::fastpath {

// The tid of a record whose thread is not known: no thread has tid 0 in a
// user process (0 is the idle task), so it cannot be taken for one.
inline constexpr uint32_t kUnknownTid = 0;

struct ThreadPointer {
  uint32_t tid = 0;
  uint64_t fs_base = 0;
};

class ThreadPointerMap {
 public:
  // `slack_ns`: how far outside a thread's life a time may fall and still
  // be its (the TSC's conversion error, tsc_clock.h), as long as no other
  // thread had the pointer then.
  explicit ThreadPointerMap(uint64_t slack_ns = 0) : slack_ns_(slack_ns) {}

  // The threads alive at `ts` (the install): each holds its pointer from
  // the start of time.
  void add_existing(const std::vector<ThreadPointer>& threads, uint64_t ts);
  // A thread created at `ts` (its fork event) with `fs_base`; a thread that
  // still held the pointer has ended by then (its exit may come later
  // among the events: a TCB is reused once the kernel cleared the old
  // thread's tid, before its exit tracepoint).
  void thread_created(uint64_t ts, uint32_t tid, uint64_t fs_base);
  // Thread `tid` ended at `ts`: its pointer is free from then on.
  void thread_ended(uint64_t ts, uint32_t tid);

  // Whether thread `tid` is alive here (known, not ended).
  bool live(uint32_t tid) const { return live_.count(tid) > 0; }

  // The thread that held `fs_base` at `ts`, or kUnknownTid.
  uint32_t tid_at(uint64_t fs_base, uint64_t ts) const;

 private:
  struct Holder {
    uint64_t from = 0;            // 0: before the install
    uint64_t until = UINT64_MAX;  // the thread's end, or the next holder's start
    uint32_t tid = 0;
  };
  // By pointer, holders in the order they took it.
  std::unordered_map<uint64_t, std::vector<Holder>> holders_;
  std::unordered_map<uint32_t, uint64_t> live_;  // tid -> its pointer, while open
  uint64_t slack_ns_;
};

}  // namespace atrace::fastpath
