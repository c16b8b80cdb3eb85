/* Functions of every shape the entry-probe placement must get right
 * (uprobes/placement.h), written in assembly so their bytes are exact.
 * Each returns a value target_placement.c prints, so a traced run that
 * changed what they compute shows in the output. The comments say where
 * `atrace list` must put the probe (tests/integration/test_placement.cpp).
 * System V: argument in %rdi, result in %rax. */
	.text

#define FN(name) .globl name; .type name,@function; .p2align 4; name:
#define END(name) .size name,.-name

/* +4 emulated: endbr64 is single-stepped, the push after it emulated. */
FN(pl_endbr_push)
	endbr64
	push %rbp
	mov %rsp,%rbp
	lea 1(%rdi),%rax
	pop %rbp
	ret
END(pl_endbr_push)

/* +3 emulated: the first instruction single-stepped, the second emulated. */
FN(pl_mov_push)
	mov %rdi,%rax
	push %rbx
	lea 2(%rax),%rbx
	mov %rbx,%rax
	pop %rbx
	ret
END(pl_mov_push)

/* +3 nop5: the 5-byte NOP of -mnop-mcount behind a mov (16-byte aligned,
 * so it does not cross a page). */
FN(pl_mov_nop5)
	mov %rdi,%rax
	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00
	add $3,%rax
	ret
END(pl_mov_nop5)

/* +0 single-step: the cheap push at +6 is where the loop comes back to;
 * a probe there would count every pass as a call. Returns n. */
FN(pl_loop_to_probe)
	endbr64
	xor %eax,%eax
1:	push %rbx
	lea 1(%rax),%rbx
	mov %rbx,%rax
	pop %rbx
	sub $1,%rdi
	jnz 1b
	ret
END(pl_loop_to_probe)

/* +0 single-step: the loop comes back into the prefix (+2), before the
 * push: a probe on the push would count every pass. Returns n. */
FN(pl_loop_into_prefix)
	xor %eax,%eax
1:	add $1,%rax
	push %rbx
	pop %rbx
	sub $1,%rdi
	jnz 1b
	ret
END(pl_loop_into_prefix)

/* +4 emulated: a self tail call, a jump back to +0 with the entry's stack:
 * every pass runs the whole prefix and meets the probe once, as at +0 (n
 * entries for pl_loop_to_start(n), either way). Returns 7. */
FN(pl_loop_to_start)
	endbr64
	push %rbx
	lea -1(%rdi),%rbx
	mov %rbx,%rdi
	pop %rbx
	test %rdi,%rdi
	jnz pl_loop_to_start
	mov $7,%eax
	ret
END(pl_loop_to_start)

/* +0 single-step: pl_side_door jumps into its prefix (+3), so a probe on
 * the push would count pl_side_door's calls too. Returns n + 5. */
FN(pl_shared_tail)
	mov %rdi,%rax
.Lshared_inner:
	add $5,%rax
	push %rbx
	pop %rbx
	ret
END(pl_shared_tail)

/* Enters pl_shared_tail after its first instruction. Returns n + 105. */
FN(pl_side_door)
	lea 100(%rdi),%rax
	jmp .Lshared_inner
END(pl_side_door)

/* +0 single-step: the first instruction writes below the stack pointer (the
 * red zone): the prefix ends there. Returns n. */
FN(pl_red_zone)
	mov %rdi,-8(%rsp)
	mov -8(%rsp),%rax
	push %rbx
	pop %rbx
	ret
END(pl_red_zone)

/* +0 single-step: an indirect jump (a jump table's kind) could go
 * anywhere, so the probe does not move. Returns n + 9. */
FN(pl_indirect)
	lea 9(%rdi),%rax
	push %rbx
	lea 1f(%rip),%rbx
	jmp *%rbx
1:	pop %rbx
	ret
END(pl_indirect)

	.section .note.GNU-stack,"",@progbits
