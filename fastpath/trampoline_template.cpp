// The shared code of a fast-path code region (trampoline_template.h), in
// x86-64 assembly. It is position independent: it reaches its constants and
// its own routines RIP-relatively, the ring through the constants, so the
// generator copies it as bytes. It is assembled into .rodata: atrace never
// runs it, the target does.
//
// Conventions, from the x86-64 System V ABI:
//  - at a function's entry, [rsp] is the return address and the argument
//    registers, rax (al: vector registers used by a varargs call), r10 (static
//    chain) and r11 may all be read by the function: the entry code saves and
//    restores every general register it touches. The stack below rsp is free
//    (the caller's red zone ends at the return address).
//  - at a return, rax and rdx, xmm0/xmm1 and st0/st1 hold the value; the stub
//    keeps every general register anyway, because GCC's -fipa-ra lets a caller
//    keep values in call-clobbered registers the callee is known not to touch.
//  - flags are not kept: no convention carries them over a call or a return.
//  - no vector or x87 register is ever touched.
//
// The constants' offsets (data block below) must match trampoline_template.h.
// Record kinds (ring_layout.h RecordKind): 1 Entry, 2 Exit, 3 EntryNoExit,
// 4 Unwound. A record's last word is function_id | kind << 32 | depth << 48.
#include "fastpath/trampoline_template.h"

// clang-format off
asm(R"(
  .pushsection .rodata.atrace_fastpath_template, "a"
  .balign 64
  .globl atrace_fp_template_begin
  .hidden atrace_fp_template_begin
atrace_fp_template_begin:
.Lfp_lanes:      .quad 0
.Lfp_records:    .quad 0
.Lfp_threads:    .quad 0
.Lfp_slot_bytes: .quad 0
.Lfp_lane_mask:  .quad 0
.Lfp_lane_slots: .quad 0
.Lfp_slot_mask:  .quad 0
.Lfp_thread_mask: .quad 0
.Lfp_depth:      .quad 0
.Lfp_stub:       .quad 0
  .balign 64
  .fill 128 - (. - atrace_fp_template_begin), 1, 0

# fp_find_slot: the calling thread's ThreadSlot, claimed if it has none.
# In: rsi = thread pointer (not 0). Out: rdi = the slot, 0 when the table is
# full. Clobbers rax, rcx, rdx.
# Open addressing with linear probing; slots are claimed by a compare-and-
# swap from 0 and never released, so a thread finds its slot again on the
# same probe sequence before any free slot. A compare-and-swap that fails
# because the slot now holds this thread's own pointer lost to a signal
# handler of this thread, which claimed the slot between the read of 0 and
# the compare-and-swap: the slot is ours. (Probing on would give the thread
# a second slot, its outer call's frame pushed there and its return
# searched in the first one: "no shadow frame", the process stopped.)
.Lfp_find_slot:
  movabs $0x9E3779B97F4A7C15, %rcx
  imul %rsi, %rcx
  shr $32, %rcx
  and .Lfp_thread_mask(%rip), %rcx
  mov .Lfp_thread_mask(%rip), %rdx
  inc %rdx
1:
  mov %rcx, %rdi
  imul .Lfp_slot_bytes(%rip), %rdi
  add .Lfp_threads(%rip), %rdi
  mov (%rdi), %rax
  cmp %rsi, %rax
  je 3f
  test %rax, %rax
  jnz 2f
  lock cmpxchg %rsi, (%rdi)
  je 3f
  cmp %rsi, %rax
  je 3f
2:
  inc %rcx
  and .Lfp_thread_mask(%rip), %rcx
  dec %rdx
  jnz 1b
  xor %edi, %edi
3:
  ret

# fp_record: writes one record into the lane of the current CPU.
# In: r9 = function_id | kind << 32 | depth << 48, rsi = thread pointer.
# Clobbers rax, rcx, rdx, r10, r11. A full lane counts the record as lost.
.Lfp_record:
  # 6 bytes the generator may replace by `rdtsc; rdpid %rcx` (the same
  # values, half the cost on this kind of CPU: trampoline.h TscRead).
  .globl atrace_fp_template_tsc
  .hidden atrace_fp_template_tsc
atrace_fp_template_tsc:
  rdtscp
  nopl (%rax)
  shl $32, %rdx
  or %rax, %rdx
  mov %rdx, %r11
  and .Lfp_lane_mask(%rip), %rcx
  imul $192, %rcx, %r10
  add .Lfp_lanes(%rip), %r10
  mov (%r10), %rax
1:
  mov %rax, %rdx
  sub 64(%r10), %rdx
  cmp .Lfp_lane_slots(%rip), %rdx
  jae 2f
  lea 1(%rax), %rdx
  lock cmpxchg %rdx, (%r10)
  jne 1b
  imul .Lfp_lane_slots(%rip), %rcx
  and .Lfp_slot_mask(%rip), %rax
  add %rcx, %rax
  shl $5, %rax
  add .Lfp_records(%rip), %rax
  mov %r11, 8(%rax)
  mov %rsi, 16(%rax)
  mov %r9, 24(%rax)
  mov %rdx, (%rax)
  ret
2:
  lock incq 128(%r10)
  ret

# fp_entry: called by a function's trampoline.
# [rsp] = return into the trampoline, [rsp+8] = function id, [rsp+16] = the
# hooked call's return address (its address is the frame's stack slot).
  .balign 16
  .globl atrace_fp_template_entry
  .hidden atrace_fp_template_entry
atrace_fp_template_entry:
  push %rax
  push %rcx
  push %rdx
  push %rsi
  push %rdi
  push %r8
  push %r9
  push %r10
  push %r11
  mov 80(%rsp), %r9d
  xor %r8d, %r8d
  mov %fs:0, %rsi
  test %rsi, %rsi
  jz 8f
  call .Lfp_find_slot
  test %rdi, %rdi
  jz 8f
  mov 8(%rdi), %r8d
  cmp .Lfp_depth(%rip), %r8
  jae 8f
  lea (%r8,%r8,2), %rdx
  lea 16(%rdi,%rdx,8), %rdx
  lea 88(%rsp), %rcx
  mov (%rcx), %rax
  # The frame, then the depth, then the frame again: a signal handler that
  # enters a hooked function between the first writes and the depth store
  # takes the same frame and gives it back before we go on; after the depth
  # store it takes the next one.
  mov %rax, (%rdx)
  mov %rcx, 8(%rdx)
  mov %r9d, 16(%rdx)
  inc %r8d
  mov %r8d, 8(%rdi)
  mov %rax, (%rdx)
  mov %rcx, 8(%rdx)
  mov %r9d, 16(%rdx)
  mov .Lfp_stub(%rip), %rax
  mov %rax, (%rcx)
  mov $1, %eax
  jmp 9f
8:
  mov $3, %eax
9:
  shl $32, %rax
  or %rax, %r9
  shl $48, %r8
  or %r8, %r9
  call .Lfp_record
  pop %r11
  pop %r10
  pop %r9
  pop %r8
  pop %rdi
  pop %rsi
  pop %rdx
  pop %rcx
  pop %rax
  ret

# fp_return: the return stub. A hooked function's ret lands here with
# rsp = its stack slot + 8.
#
# Why the search below finds the frame (fp_lost is not reached for a frame
# the entry code hooked): the entry code wrote the stub address into a stack
# slot S only after pushing the frame {return address, S} on this thread's
# shadow stack, and a frame leaves the shadow stack in three ways only:
#  (1) its own return here, which pops it;
#  (2) the return here of a frame F below it; F's function returned while
#      this one had not, which the stack discipline allows only when this
#      one's activation was abandoned (longjmp, unwinding) and will never
#      return;
#  (3) fp_unwind, which drops only frames whose slot is at or above its
#      stack pointer, after writing the original return address back into
#      the slot when it still holds the stub: such a frame's return does not
#      come here (a slot that no longer holds the stub belongs to an
#      activation that is gone).
# So the frame is on the stack when its ret lands here, and the topmost frame
# with stack slot S is it: every frame pushed above it while it was live was
# pushed by a call nested in its activation, at a lower stack address on the
# same stack (its slot < S), or on another stack (a sigaltstack handler:
# different memory, slot != S). What this does not cover: switching between
# user-level stacks (swapcontext, coroutines), where a frame of another stack
# can be dropped by (2) and then return; and functions that return twice
# (setjmp, vfork, getcontext), which must not be hooked
# (fastpath/trampoline.h refuses them). fp_lost says so on stderr before the
# process dies, rather than jumping to garbage.
  .balign 16
  .globl atrace_fp_template_stub
  .hidden atrace_fp_template_stub
atrace_fp_template_stub:
  lea -8(%rsp), %rsp
  push %rax
  push %rcx
  push %rdx
  push %rsi
  push %rdi
  push %r8
  push %r9
  push %r10
  push %r11
  push %rbx
  # 80(%rsp) is the stack slot S: it receives the original return address.
  mov %fs:0, %rsi
  call .Lfp_find_slot
  test %rdi, %rdi
  jz .Lfp_lost
  lea 80(%rsp), %rbx
  mov 8(%rdi), %r8d
1:
  test %r8d, %r8d
  jz .Lfp_lost
  dec %r8d
  lea (%r8,%r8,2), %rdx
  cmp %rbx, 24(%rdi,%rdx,8)
  jne 1b
  # r8 = k, this return's frame. Frames above it were abandoned: one
  # Unwound record each, from the top, depth after = their index.
  mov 8(%rdi), %ebx
2:
  dec %ebx
  cmp %r8d, %ebx
  jbe 3f
  lea (%rbx,%rbx,2), %rdx
  mov 32(%rdi,%rdx,8), %r9d
  mov $4, %eax
  shl $32, %rax
  or %rax, %r9
  mov %rbx, %rax
  shl $48, %rax
  or %rax, %r9
  call .Lfp_record
  jmp 2b
3:
  lea (%r8,%r8,2), %rdx
  lea 16(%rdi,%rdx,8), %rdx
  mov (%rdx), %rax
  mov %rax, 80(%rsp)
  mov 16(%rdx), %r9d
  # The return address is read before the frame is given up: a signal
  # handler may reuse it from here on.
  mov %r8d, 8(%rdi)
  mov $2, %eax
  shl $32, %rax
  or %rax, %r9
  shl $48, %r8
  or %r8, %r9
  call .Lfp_record
  pop %rbx
  pop %r11
  pop %r10
  pop %r9
  pop %r8
  pop %rdi
  pop %rsi
  pop %rdx
  pop %rcx
  pop %rax
  lea 8(%rsp), %rsp
  # [rsp-8] is in the red zone, which signal delivery does not overwrite.
  jmp *-8(%rsp)

.Lfp_lost:
  mov $1, %eax
  mov $2, %edi
  lea .Lfp_lost_msg(%rip), %rsi
  mov $(.Lfp_lost_end - .Lfp_lost_msg), %edx
  syscall
  ud2
.Lfp_lost_msg:
  .ascii "atrace fast path: a return through the stub has no shadow frame (stack switching?)\n"
.Lfp_lost_end:

# fp_unwind: called by the trampoline of an unwinder entry point
# (_Unwind_RaiseException, ...). The unwinder reads return addresses from the
# stack, so every hooked frame of this thread whose stack slot is at or above
# the current stack pointer (the frames the unwinder can walk) gets its
# original return address back if the slot still holds the stub (topmost
# first: two frames share a slot after a tail call), is recorded Unwound and
# leaves the shadow stack: the exits of those calls are not recorded. Frames
# below the stack pointer stay, in order, untouched: abandoned ones (a later
# return drops them) or live ones on another stack (a signal handler's
# sigaltstack above the thread's stack throwing inside the handler), which
# must still find their frame when they return.
# [rsp] = return into the trampoline, [rsp+8] = function id (unused).
  .balign 16
  .globl atrace_fp_template_unwind
  .hidden atrace_fp_template_unwind
atrace_fp_template_unwind:
  push %rax
  push %rcx
  push %rdx
  push %rsi
  push %rdi
  push %r8
  push %r9
  push %r10
  push %r11
  push %rbx
  mov %fs:0, %rsi
  test %rsi, %rsi
  jz 9f
  call .Lfp_find_slot
  test %rdi, %rdi
  jz 9f
  mov 8(%rdi), %ebx
1:
  test %ebx, %ebx
  jz 8f
  dec %ebx
  lea (%rbx,%rbx,2), %rdx
  lea 16(%rdi,%rdx,8), %rdx
  mov 8(%rdx), %rcx
  cmp %rsp, %rcx
  jb 1b
  mov .Lfp_stub(%rip), %rax
  cmp %rax, (%rcx)
  jne 2f
  mov (%rdx), %rax
  mov %rax, (%rcx)
2:
  mov 16(%rdx), %r9d
  mov $4, %eax
  shl $32, %rax
  or %rax, %r9
  mov %rbx, %rax
  shl $48, %rax
  or %rax, %r9
  call .Lfp_record
  jmp 1b
  # Keep the frames below the stack pointer, packed in order: ebx reads,
  # r8d writes. The depth changes once, at the end (signal handlers that
  # run meanwhile push and pop above the old depth).
8:
  xor %r8d, %r8d
3:
  cmp 8(%rdi), %ebx
  jae 7f
  lea (%rbx,%rbx,2), %rdx
  lea 16(%rdi,%rdx,8), %rdx
  cmp %rsp, 8(%rdx)
  jae 4f
  lea (%r8,%r8,2), %rax
  lea 16(%rdi,%rax,8), %rcx
  mov (%rdx), %rax
  mov %rax, (%rcx)
  mov 8(%rdx), %rax
  mov %rax, 8(%rcx)
  mov 16(%rdx), %rax
  mov %rax, 16(%rcx)
  inc %r8d
4:
  inc %ebx
  jmp 3b
7:
  mov %r8d, 8(%rdi)
9:
  pop %rbx
  pop %r11
  pop %r10
  pop %r9
  pop %r8
  pop %rdi
  pop %rsi
  pop %rdx
  pop %rcx
  pop %rax
  ret

  .balign 16
  .globl atrace_fp_template_end
  .hidden atrace_fp_template_end
atrace_fp_template_end:
  .popsection
)");
// clang-format on

extern "C" {
extern const uint8_t atrace_fp_template_begin[];
extern const uint8_t atrace_fp_template_entry[];
extern const uint8_t atrace_fp_template_unwind[];
extern const uint8_t atrace_fp_template_stub[];
extern const uint8_t atrace_fp_template_end[];
extern const uint8_t atrace_fp_template_tsc[];
}

namespace atrace::fastpath::tmpl {

const Template& get() {
  static const Template t{
      atrace_fp_template_begin,
      static_cast<size_t>(atrace_fp_template_end - atrace_fp_template_begin),
      static_cast<size_t>(atrace_fp_template_entry - atrace_fp_template_begin),
      static_cast<size_t>(atrace_fp_template_unwind - atrace_fp_template_begin),
      static_cast<size_t>(atrace_fp_template_stub - atrace_fp_template_begin),
      static_cast<size_t>(atrace_fp_template_tsc - atrace_fp_template_begin),
  };
  return t;
}

}  // namespace atrace::fastpath::tmpl
