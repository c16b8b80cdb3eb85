/* The probed functions of uprobe_target, one per translation unit so that
 * each can be compiled with the flags that give it the entry instruction the
 * benchmark needs (see CMakeLists.txt), and none can be inlined. */
#ifndef ATRACE_BENCH_FNS_H
#define ATRACE_BENCH_FNS_H

#ifdef __cplusplus
extern "C" {
#endif

/* First instruction mov $imm,%eax (-O2): not emulated, single-stepped out of
 * line (XOL). */
long bench_fn_singlestep(long x);
/* First instruction push %rbp (-O2 -fno-omit-frame-pointer): emulated. */
long bench_fn_push(long x);
/* First instruction nopl 0x0(%rax,%rax,1) = 0f 1f 44 00 00
 * (-pg -mfentry -mnop-mcount): optimized uprobe on Linux 6.18+. */
long bench_fn_nop5(long x);
/* First instructions five 1-byte nops 0x90 (-fpatchable-function-entry=5):
 * emulated, but not an optimizable NOP5. */
long bench_fn_nop1x5(long x);
/* endbr64 then push %rbp (-fcf-protection=full -fno-omit-frame-pointer): a
 * probe at +0 is single-stepped; atrace puts it on the push at +4, emulated
 * (uprobes/placement.h). */
long bench_fn_endbrpush(long x);

/* fn_entries.S: hand-picked entry instructions, body `return x + 1`. */
long bench_e_movimm(long x);
long bench_e_movreg(long x);
long bench_e_subrsp(long x);
long bench_e_endbr64(long x);
long bench_e_movrr(long x);
long bench_e_push(long x);
long bench_e_jmp0(long x);
long bench_e_nop1(long x);
long bench_e_nop2(long x);
long bench_e_nop3(long x);
long bench_e_nop4(long x);
long bench_e_nop6(long x);
long bench_e_nop5(long x);
long bench_e_nop5split(long x);

#ifdef __cplusplus
}
#endif

#endif
