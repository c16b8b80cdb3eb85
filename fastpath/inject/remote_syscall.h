// A system call run inside a stopped process, by one of its threads,
// without the program's help: how atrace maps memory into it (mmap,
// madvise, munmap, prctl).
//
// How: the thread's registers and signal mask are saved; `syscall; int3`
// (0f 05 cc) is written at its rip through /proc/PID/mem (every thread is
// stopped, so no other thread can run those bytes); the call's number and
// arguments go into rax, rdi, rsi, rdx, r10, r8, r9, with orig_rax = -1 so
// that the kernel does not restart, on the way out, a system call the
// thread was stopped in; the thread runs to the int3 with every signal
// blocked but SIGTRAP (a signal sent meanwhile stays pending; a blocked
// SIGTRAP would be forced through with its handler reset); rax is the
// result. Then the bytes, registers (rax/orig_rax with the kernel's restart
// code included: an interrupted read or nanosleep restarts as after any
// signal) and signal mask are put back exactly, and the thread is brought
// from the int3's SIGTRAP stop back to an interrupt stop (a tracer's death
// ends the first by delivering the SIGTRAP, the second harmlessly).
//
// The only moment a killed atrace hurts the program: from writing the
// three bytes to that interrupt stop (microseconds, once per call), the
// thread would run the call and die of the int3's SIGTRAP.
#pragma once

#include <sys/types.h>

#include <cstdint>

#include "fastpath/inject/process_memory.h"
#include "fastpath/inject/stopped_process.h"

namespace atrace::fastpath {

class RemoteSyscall {
 public:
  // Runs calls in thread `tid` of `process` (0: its main thread when it is
  // stopped, else the first stopped thread).
  explicit RemoteSyscall(StoppedProcess& process, pid_t tid = 0);

  pid_t tid() const { return tid_; }
  ProcessMemory& memory() { return memory_; }

  // The raw result: >= 0, or -errno. Throws InjectError (ProcessGone) when
  // the call could not be run.
  long call(long nr, uint64_t a1 = 0, uint64_t a2 = 0, uint64_t a3 = 0, uint64_t a4 = 0,
            uint64_t a5 = 0, uint64_t a6 = 0);

  // The same, InjectError "what: strerror" for a negative result.
  uint64_t checked(const char* what, long nr, uint64_t a1 = 0, uint64_t a2 = 0, uint64_t a3 = 0,
                   uint64_t a4 = 0, uint64_t a5 = 0, uint64_t a6 = 0);

 private:
  StoppedProcess& process_;
  pid_t tid_;
  ProcessMemory memory_;
};

}  // namespace atrace::fastpath
