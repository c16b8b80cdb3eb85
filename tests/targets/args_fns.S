/* A function whose prefix overwrites its first argument register before a
 * cheap instruction (tests/integration/test_args.cpp): placement alone
 * would put its entry probe on the push at +5, after `xor %edi,%edi`, where
 * arg1 reads 0; with --args it must stay at +0 and read the real value.
 * System V: argument in %rdi, result in %rax (the argument plus one). */
	.text
	.globl ar_clobber
	.type ar_clobber,@function
	.p2align 4
ar_clobber:
	mov %rdi,%rax
	xor %edi,%edi
	push %rbx
	lea 1(%rax),%rbx
	mov %rbx,%rax
	pop %rbx
	ret
	.size ar_clobber,.-ar_clobber
	.section .note.GNU-stack,"",@progbits
