/*
 * Functions whose first instruction is chosen by hand, for uprobe_paths.sh:
 * what a uprobe costs on each kind of entry instruction (kernel-notes/
 * emulated-vs-single-step.md). Each is `long f(long x)` returning x + 1;
 * the entry instruction is the only difference.
 */
#define FN(name) .globl name; .type name, @function; .p2align 4; name:
#define END(name) lea 1(%rdi), %rax; ret; .size name, . - name

	.text
/* Single-stepped out of line on 6.18 (not emulated, not a NOP) */
FN(bench_e_movimm)	mov $0x9e3779b1, %eax		/* b8 imm32 */
END(bench_e_movimm)
FN(bench_e_movreg)	mov %rdi, %rax			/* 48 89 f8 */
END(bench_e_movreg)
FN(bench_e_subrsp)	sub $8, %rsp; add $8, %rsp	/* 48 83 ec 08 */
END(bench_e_subrsp)
FN(bench_e_endbr64)	endbr64				/* f3 0f 1e fa */
END(bench_e_endbr64)
FN(bench_e_movrr)	.byte 0x48, 0x89, 0xc0		/* mov %rax,%rax */
END(bench_e_movrr)
/* Emulated */
FN(bench_e_push)	push %rbp; pop %rbp		/* 55 */
END(bench_e_push)
FN(bench_e_jmp0)	.byte 0xeb, 0x00		/* jmp .+2 */
END(bench_e_jmp0)
FN(bench_e_nop1)	.byte 0x90
END(bench_e_nop1)
FN(bench_e_nop2)	.byte 0x66, 0x90
END(bench_e_nop2)
FN(bench_e_nop3)	.byte 0x0f, 0x1f, 0x00
END(bench_e_nop3)
FN(bench_e_nop4)	.byte 0x0f, 0x1f, 0x40, 0x00
END(bench_e_nop4)
FN(bench_e_nop6)	.byte 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00
END(bench_e_nop6)
/* The canonical NOP5: optimized on 6.18+ */
FN(bench_e_nop5)	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00
END(bench_e_nop5)
/* The same NOP5 across a page boundary: the kernel cannot patch it
 * atomically, so it is not optimized (only emulated). */
	.p2align 12
	.fill 4094, 1, 0xcc
	.globl bench_e_nop5split; .type bench_e_nop5split, @function
bench_e_nop5split:
	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00
END(bench_e_nop5split)

	.section .note.GNU-stack, "", @progbits
