/*
 * The functions atrace calibrates its probe cost on (record/calibrate.h):
 * one per uprobe path, each `long f(long x)` returning x + 1, whose first
 * instruction alone decides the path the kernel takes
 * (kernel-notes/emulated-vs-single-step.md; the same entries as
 * bench/fn_entries.S). Written in assembly so that no compiler option can
 * change those bytes; 16-byte alignment keeps the NOP5 inside one page, a
 * condition of its optimization.
 */
#define FN(name) .globl name; .hidden name; .type name, @function; .p2align 4; name:
#define END(name) lea 1(%rdi), %rax; ret; .size name, . - name

	.text
/* 0f 1f 44 00 00: optimized uprobe (a call to a trampoline) on 6.18+ */
FN(atrace_calibrate_nop5)	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00
END(atrace_calibrate_nop5)
/* push %rbp (55): int3, emulated */
FN(atrace_calibrate_push)	push %rbp; pop %rbp
END(atrace_calibrate_push)
/* mov %rdi,%rax (48 89 f8): int3, then single-stepped out of line */
FN(atrace_calibrate_mov)	mov %rdi, %rax
END(atrace_calibrate_mov)

	.section .note.GNU-stack, "", @progbits
