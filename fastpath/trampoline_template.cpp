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
// 4 Unwound, 5 Caught, 6 ThreadExit, 7 Switched, 8 GivenBack. A shadow frame's flags
// (ShadowFrame::flags, 16 bits) are 0 while it is armed (its slot holds the
// stub), else the kind it will be recorded with when it leaves. A record's last word is function_id
// | kind << 32 | depth << 48.
#include "fastpath/trampoline_template.h"

// clang-format off
asm(R"(
  .pushsection .rodata.atrace_fastpath_template, "a"

# Every call-clobbered general register, which the shared code saves around
# its work: the caller of a hooked function, or the function itself at its
# entry, may hold live values in any of them (see the conventions above).
.macro fp_push_scratch
  push %rax
  push %rcx
  push %rdx
  push %rsi
  push %rdi
  push %r8
  push %r9
  push %r10
  push %r11
.endm
.macro fp_pop_scratch
  pop %r11
  pop %r10
  pop %r9
  pop %r8
  pop %rdi
  pop %rsi
  pop %rdx
  pop %rcx
  pop %rax
.endm

# How far below a call's stack slot a frame's slot may lie and still be taken
# for one of this stack's (the entry's stack-pointer rule): a frame further
# away may be live on another stack (a sigaltstack handler, a context).
.set FP_SAME_STACK, 0x100000

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
.Lfp_gate:       .quad 0
.Lfp_uretprobe:  .quad 0
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
# Nothing is written while the gate word is 0: a fork child's (its page is
# wiped on fork) shares the lanes with its parent (ring_layout.h); its calls
# (Entry, EntryNoExit) are counted in RingHeader::ungated, the next word.
.Lfp_record:
  mov .Lfp_gate(%rip), %rax
  cmpq $0, (%rax)
  je 4f
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
  # The tail is read before the head: a tail read after the head can be
  # past it (a signal handler's records written and read in between, or a
  # preemption while other threads' were), and head - tail would look like
  # a full lane. Read first, the tail is never past the head read after it
  # (atrace publishes only tails it has seen committed); at worst it is a
  # little old and the lane looks a little fuller than it is.
1:
  mov 64(%r10), %rdx
  neg %rdx
  mov (%r10), %rax
  add %rax, %rdx
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
3:
  ret
4:
  mov %r9, %rdx
  shr $32, %rdx
  cmp $1, %dx
  je 5f
  cmp $3, %dx
  jne 3b
5:
  lock incq 8(%rax)
  ret

# fp_entry: called by a function's trampoline.
# [rsp] = return into the trampoline, [rsp+8] = function id, [rsp+16] = the
# hooked call's return address (its address is the frame's stack slot).
  .balign 16
  .globl atrace_fp_template_entry
  .hidden atrace_fp_template_entry
atrace_fp_template_entry:
  fp_push_scratch
  mov 80(%rsp), %r9d
  xor %r8d, %r8d
  mov %fs:0, %rsi
  test %rsi, %rsi
  jz 8f
  call .Lfp_find_slot
  test %rdi, %rdi
  jz 8f
  mov 8(%rdi), %r8d
  # The stack-pointer rule: the top frame was left (longjmp, an unwind that
  # ended without a catch we saw) when its slot lies below this call's slot
  # S on this stack, or is S itself and S holds something else than the
  # stub (a tail call from the frame of S keeps it: S then holds the stub).
  test %r8d, %r8d
  jz 4f
  lea -1(%r8), %eax
  lea (%rax,%rax,2), %rax
  mov 24(%rdi,%rax,8), %rax
  lea 88(%rsp), %rcx
  cmp %rcx, %rax
  jae 3f
  sub %rax, %rcx
  cmp $FP_SAME_STACK, %rcx
  jae 4f
  jmp 5f
3:
  jne 4f
  mov (%rcx), %rax
  cmp .Lfp_stub(%rip), %rax
  je 4f
5:
  lea 88(%rsp), %rcx
  call .Lfp_drop_left
  mov 80(%rsp), %r9d
  mov 8(%rdi), %r8d
4:
  cmp .Lfp_depth(%rip), %r8
  jae 8f
  # A return into the kernel's uretprobe trampoline (a kernel-probed caller
  # tail-called this function) is not hooked: the unwind guard must find
  # the trampoline in that slot at an unwind, and the kernel returns it.
  mov 88(%rsp), %rax
  cmp .Lfp_uretprobe(%rip), %rax
  je 8f
  lea (%r8,%r8,2), %rdx
  lea 16(%rdi,%rdx,8), %rdx
  lea 88(%rsp), %rcx
  mov (%rcx), %rax
  # The frame, then the depth, then the frame again: a signal handler that
  # enters a hooked function between the first writes and the depth store
  # takes the same frame and gives it back before we go on; after the depth
  # store it takes the next one. The 8-byte store of the id also clears the
  # frame's flags (r9's upper half is 0): the frame is armed.
  mov %rax, (%rdx)
  mov %rcx, 8(%rdx)
  mov %r9, 16(%rdx)
  inc %r8d
  mov %r8d, 8(%rdi)
  mov %rax, (%rdx)
  mov %rcx, 8(%rdx)
  mov %r9, 16(%rdx)
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
  fp_pop_scratch
  ret

# fp_drop_left: the entry's stack-pointer rule, for as many frames from the
# top as it finds left. In: rdi = thread slot, rsi = thread pointer, rcx =
# the entering call's slot S. Each left frame is recorded (fp_drop: Unwound,
# or as its flags say) and the depth is stored once at the end. Clobbers
# rax, rcx, rdx, r9, r10, r11.
.Lfp_drop_left:
  push %rbx
  push %r12
  push %r13
  mov %rcx, %r13
  mov $4, %r12d
  mov 8(%rdi), %ebx
1:
  test %ebx, %ebx
  jz 9f
  lea -1(%rbx), %eax
  lea (%rax,%rax,2), %rax
  mov 24(%rdi,%rax,8), %rax
  cmp %r13, %rax
  jae 2f
  mov %r13, %rcx
  sub %rax, %rcx
  cmp $FP_SAME_STACK, %rcx
  jae 9f
  jmp 3f
2:
  jne 9f
  mov (%r13), %rax
  cmp .Lfp_stub(%rip), %rax
  je 9f
3:
  dec %ebx
  call .Lfp_drop
  jmp 1b
9:
  mov %ebx, 8(%rdi)
  pop %r13
  pop %r12
  pop %rbx
  ret

# fp_drop: records that frame ebx of thread slot rdi leaves the shadow stack
# without its return: as its flags say when an unwinder disarmed it (5, an
# exception unwound it; 8, its return address was given back to a walk and
# its return is not seen), else as r12d says (4 Unwound, 6 ThreadExit, 7
# Switched, 8 GivenBack). An armed
# frame whose slot still holds the stub gets its original return address
# back first, unless the slot lies in [rsp, r13) (the caller's own saved
# registers: a dead frame of this stack): were the frame live after all (on
# another stack), it returns straight to its caller, untimed but right.
# In: rdi, rsi (thread pointer), ebx, r12d, r13. Keeps rbx, rsi, rdi, r8,
# r12, r13; clobbers rax, rcx, rdx, r9, r10, r11.
.Lfp_drop:
  lea (%rbx,%rbx,2), %rdx
  lea 16(%rdi,%rdx,8), %rdx
  movzwl 20(%rdx), %eax
  test %eax, %eax
  jnz 2f
  mov %r12d, %eax
  mov 8(%rdx), %rcx
  cmp %rsp, %rcx
  jb 1f
  cmp %r13, %rcx
  jb 2f
1:
  mov .Lfp_stub(%rip), %r9
  cmp %r9, (%rcx)
  jne 2f
  mov (%rdx), %r9
  mov %r9, (%rcx)
2:
  mov 16(%rdx), %r9d
  shl $32, %rax
  or %rax, %r9
  mov %rbx, %rax
  shl $48, %rax
  or %rax, %r9
  jmp .Lfp_record

# fp_return: the return stub. A hooked function's ret lands here with
# rsp = its stack slot + 8.
#
# Why the search below finds the frame (fp_lost is not reached for a frame
# the entry code hooked): the entry code wrote the stub address into a stack
# slot S only after pushing the frame {return address, S} on this thread's
# shadow stack, and a frame leaves the shadow stack, or is disarmed (its
# return no longer comes here), in these ways only:
#  (1) its own return here, which pops it;
#  (2) fp_drop, for frames found left (the entry's stack-pointer rule, the
#      return here of a frame below it, a forced unwind, a stack switch),
#      which first writes the original return address back into the slot
#      when it still holds the stub, so that a frame wrongly taken for left
#      (on another stack) returns straight to its caller;
#  (3) fp_unwind's disarming, which also writes the original return address
#      back first; a catch re-arms only frames whose slot still holds that
#      address (the same activation), writing the stub again.
# So the frame is on the stack, armed, when its ret lands here, and the
# topmost armed frame with stack slot S is it: every frame pushed above it
# while it was live was pushed by a call nested in its activation, at a
# lower stack address on the same stack (its slot < S), or on another stack
# (a sigaltstack handler: different memory, slot != S). What this does not
# cover: a program that copies a stack holding the stub elsewhere and
# returns through the copy after its frame left (stack-copying coroutines);
# functions that return twice (setjmp, vfork, getcontext), which must not
# be hooked (fastpath/trampoline.h refuses them). fp_lost says so on stderr
# before the process dies, rather than jumping to garbage. swapcontext and
# setcontext give every frame of the thread back (fp_unwind, mode 5): the
# calls open across a switch return untimed, never here.
  .balign 16
  .globl atrace_fp_template_stub
  .hidden atrace_fp_template_stub
atrace_fp_template_stub:
  lea -8(%rsp), %rsp
  fp_push_scratch
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
  cmpw $0, 36(%rdi,%rdx,8)
  jne 1b
  # r8 = k, this return's frame. Frames above it were left: fp_drop each,
  # from the top, depth after = their index.
  lea 1(%r8), %eax
  cmp 8(%rdi), %eax
  je 3f
  call .Lfp_drop_above
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
  fp_pop_scratch
  lea 8(%rsp), %rsp
  # [rsp-8] is in the red zone, which signal delivery does not overwrite.
  jmp *-8(%rsp)

# fp_drop_above: the frames above frame r8 (the stub's), each left. In: rdi,
# rsi, r8; [rsp+8+80] is the stub's slot S (its saved registers lie below
# S + 8). Keeps r8, rdi, rsi.
.Lfp_drop_above:
  push %r12
  push %r13
  lea 8+16+88(%rsp), %r13
  mov $4, %r12d
  mov 8(%rdi), %ebx
1:
  dec %ebx
  cmp %r8d, %ebx
  jbe 2f
  call .Lfp_drop
  jmp 1b
2:
  pop %r13
  pop %r12
  ret

.Lfp_lost:
  mov $1, %eax
  mov $2, %edi
  lea .Lfp_lost_msg(%rip), %rsi
  mov $(.Lfp_lost_end - .Lfp_lost_msg), %edx
  syscall
  ud2
.Lfp_lost_msg:
  .ascii "atrace fast path: a return through the stub has no shadow frame (a copied stack?)\n"
.Lfp_lost_end:

# fp_unwind: called by the trampoline of an unwinder entry point, with the
# mode (trampoline.h UnwinderMode) where a function's id would be:
#  1 an unwind starts or resumes (_Unwind_RaiseException, _Unwind_Resume,
#    _Unwind_Resume_or_Rethrow): every frame whose slot is at or above the
#    stack pointer (what the unwinder can walk) is disarmed: its original
#    return address goes back into the slot when the slot holds the stub
#    (topmost first: two frames share a slot after a tail call), and it
#    stays on the shadow stack, flagged 5. Frames an earlier unwind disarmed
#    whose slot is now below the stack pointer were unwound: dropped (5).
#  2 a stack walk (_Unwind_Backtrace): disarmed the same way, flagged 8
#    (if neither the walk's end nor a catch re-arms them, their returns
#    are not seen: untimed, given back).
#  3 a forced unwind (_Unwind_ForcedUnwind: pthread_exit, cancellation):
#    it ends the thread, every frame at or above the stack pointer is
#    dropped (6, its original return address given back).
#  4 a catch (__cxa_begin_catch, _Unwind_DeleteException): each disarmed
#    frame whose slot is at or above the stack pointer and still holds its
#    original return address is live: re-armed (the stub written again,
#    bottom-up, so that a tail call's two frames both match); every other
#    disarmed frame was unwound: dropped (5).
#  5 a stack switch (swapcontext, setcontext): every frame of the thread is
#    dropped (7), its return address given back wherever its slot holds the
#    stub, on any stack: a call open across a switch returns untimed.
#  6 a walk ends (a `ret` of _Unwind_Backtrace, patched mid-function): each
#    frame a walk disarmed (8) whose slot is at or above the stack pointer
#    and still holds its original return address is re-armed, as at a
#    catch; nothing is dropped. A walk its callback leaves by longjmp never
#    gets here: its frames stay disarmed (untimed) unless a later walk's
#    end finds them live.
# Frames below the stack pointer are otherwise left alone: abandoned ones
# (a later entry or return drops them) or live ones on another stack (a
# signal handler's sigaltstack above the thread's stack throwing inside the
# handler), which must still find their frame when they return.
# Frames to drop are marked (bit 31 of their flags), recorded from the top,
# then the rest packed in order; the depth changes once, at the end (signal
# handlers that run meanwhile push and pop above the old depth).
# [rsp] = return into the trampoline, [rsp+8] = the mode, [rsp+16] = the
# unwinder's return address (its address is the unwinder's stack pointer).
  .balign 16
  .globl atrace_fp_template_unwind
  .hidden atrace_fp_template_unwind
atrace_fp_template_unwind:
  fp_push_scratch
  push %rbx
  push %r12
  push %r13
  mov %fs:0, %rsi
  test %rsi, %rsi
  jz 9f
  call .Lfp_find_slot
  test %rdi, %rdi
  jz 9f
  lea 112(%rsp), %r13
  mov 104(%rsp), %r12d
  mov 8(%rdi), %ebx
  cmp $4, %r12d
  je 40f
  cmp $6, %r12d
  je 40f
  # Modes 1, 2, 3, 5: one pass from the top.
1:
  test %ebx, %ebx
  jz 20f
  dec %ebx
  lea (%rbx,%rbx,2), %rdx
  lea 16(%rdi,%rdx,8), %rdx
  cmp $5, %r12d
  je 15f
  mov 8(%rdx), %rcx
  cmp %r13, %rcx
  jb 12f
  cmp $3, %r12d
  je 15f
  # Modes 1, 2, at or above the stack pointer: disarm.
  cmpw $0, 20(%rdx)
  jne 1b
  mov .Lfp_stub(%rip), %rax
  cmp %rax, (%rcx)
  jne 11f
  mov (%rdx), %rax
  mov %rax, (%rcx)
11:
  mov $5, %eax
  mov $8, %ecx
  cmp $2, %r12d
  cmove %ecx, %eax
  mov %eax, 20(%rdx)
  jmp 1b
12:
  # Below the stack pointer: in mode 1 a disarmed frame was unwound.
  cmp $1, %r12d
  jne 1b
  cmpw $0, 20(%rdx)
  je 1b
15:
  orl $0x80000000, 20(%rdx)
  jmp 1b

40:
  # Modes 4 (a catch) and 6 (a walk ends), from the bottom: a disarmed
  # frame (in mode 6, one a walk disarmed: 8) whose slot is at or above the
  # stack pointer and still holds its original return address is live:
  # re-armed. Mode 4 marks every other disarmed frame (unwound); mode 6
  # leaves them as they are.
  xor %ebx, %ebx
41:
  cmp 8(%rdi), %ebx
  jae 20f
  lea (%rbx,%rbx,2), %rdx
  lea 16(%rdi,%rdx,8), %rdx
  inc %ebx
  movzwl 20(%rdx), %eax
  test %eax, %eax
  je 41b
  cmp $6, %r12d
  jne 42f
  cmp $8, %eax
  jne 41b
42:
  mov 8(%rdx), %rcx
  cmp %r13, %rcx
  jb 45f
  mov (%rdx), %rax
  cmp %rax, (%rcx)
  jne 45f
  mov .Lfp_stub(%rip), %rax
  mov %rax, (%rcx)
  movl $0, 20(%rdx)
  jmp 41b
45:
  cmp $6, %r12d
  je 41b
  orl $0x80000000, 20(%rdx)
  jmp 41b

20:
  # Record the marked frames from the top (fp_drop: armed ones, in modes
  # 3 and 5, get their return address back; r12 becomes the kind).
  mov $6, %eax
  mov $7, %ecx
  cmp $5, %r12d
  cmove %ecx, %eax
  mov %eax, %r12d
  mov 8(%rdi), %ebx
21:
  test %ebx, %ebx
  jz 30f
  dec %ebx
  lea (%rbx,%rbx,2), %rdx
  testl $0x80000000, 36(%rdi,%rdx,8)
  jz 21b
  call .Lfp_drop
  jmp 21b
30:
  # Keep the unmarked frames, packed in order: ebx reads, r8d writes.
  xor %r8d, %r8d
31:
  cmp 8(%rdi), %ebx
  jae 37f
  lea (%rbx,%rbx,2), %rdx
  lea 16(%rdi,%rdx,8), %rdx
  inc %ebx
  testl $0x80000000, 20(%rdx)
  jnz 31b
  lea (%r8,%r8,2), %rax
  lea 16(%rdi,%rax,8), %rcx
  inc %r8d
  cmp %rcx, %rdx
  je 31b
  mov (%rdx), %rax
  mov %rax, (%rcx)
  mov 8(%rdx), %rax
  mov %rax, 8(%rcx)
  mov 16(%rdx), %rax
  mov %rax, 16(%rcx)
  jmp 31b
37:
  mov %r8d, 8(%rdi)
9:
  pop %r13
  pop %r12
  pop %rbx
  fp_pop_scratch
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
