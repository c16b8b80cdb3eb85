/* SPDX-License-Identifier: GPL-2.0 */
/*
 * atrace's USDT programs: part of atrace.bpf.c, included at its end (one
 * object, one skeleton; the helpers, maps and settings are that file's).
 *
 *   usdt_hit              a USDT probe (libbpf's usdt.bpf.h reads its arguments,
 *                         from specs libbpf or record/usdt_specs.cpp wrote)
 *   usdt_hit_str          the same with string arguments (sleepable: may fault pages in)
 *   usdt_hit_str_nofault  the same where the kernel lacks the sleepable copy
 */

#include "bpf/usdt_spec.h"

/* The specs record/usdt_specs.cpp writes for sites on uprobe_multi links
 * are read by libbpf's bpf_usdt_arg(): the layouts must agree. */
#define ATRACE_SAME_FIELD(f) \
	(__builtin_offsetof(struct atrace_usdt_spec, f) == __builtin_offsetof(struct __bpf_usdt_spec, f))
_Static_assert(sizeof(struct atrace_usdt_spec) == sizeof(struct __bpf_usdt_spec), "usdt spec size");
_Static_assert(ATRACE_SAME_FIELD(usdt_cookie) && ATRACE_SAME_FIELD(arg_cnt) &&
		       ATRACE_SAME_FIELD(args[1].val_off) && ATRACE_SAME_FIELD(args[1].arg_type) &&
		       ATRACE_SAME_FIELD(args[1].reg_off) && ATRACE_SAME_FIELD(args[1].arg_signed) &&
		       ATRACE_SAME_FIELD(args[1].arg_bitshift),
	       "usdt spec layout");
_Static_assert(ATRACE_USDT_SPEC_ARGS == BPF_USDT_MAX_ARG_CNT, "usdt spec arguments");
_Static_assert(ATRACE_USDT_ARG_CONST == BPF_USDT_ARG_CONST && ATRACE_USDT_ARG_REG == BPF_USDT_ARG_REG &&
		       ATRACE_USDT_ARG_REG_DEREF == BPF_USDT_ARG_REG_DEREF,
	       "usdt argument types");
#undef ATRACE_SAME_FIELD

static __always_inline void usdt_args(struct pt_regs *ctx, struct atrace_rec_usdt *r, int n)
{
	long v;
	int i;

#pragma unroll
	for (i = 0; i < ATRACE_USDT_MAX_ARGS; i++) {
		v = 0;
		if (i < n)
			bpf_usdt_arg(ctx, i, &v);
		r->args[i] = v;
	}
}

/* The probe's argument count, at most the ATRACE_USDT_MAX_ARGS recorded. */
static __always_inline int usdt_nargs(struct pt_regs *ctx)
{
	int n = bpf_usdt_arg_cnt(ctx);

	return n < 0 ? 0 : n > ATRACE_USDT_MAX_ARGS ? ATRACE_USDT_MAX_ARGS : n;
}

/* An event without string arguments; integers come from the registers and
 * stack slots the note names. An interval's begin and end are a function
 * entry and exit of the interval's id. */
SEC("usdt")
int usdt_hit(struct pt_regs *ctx)
{
	__u64 ts = bpf_ktime_get_ns();
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u64 cookie = bpf_usdt_cookie(ctx);
	__u32 id = (__u32)cookie, role = (cookie >> 32) & 0xff;
	struct atrace_rec_usdt *r;
	__u32 cpu;
	int n;

	if (filter_functions && !traced(pid_tgid >> 32))
		return 0;
	/* Intervals do not nest: at the stop, open ones stay unfinished. */
	if (before_exec || stopping)
		return 0;
	if (role == ATRACE_USDT_BEGIN || role == ATRACE_USDT_END) {
		emit_hdr(ts, pid_tgid, id,
			 role == ATRACE_USDT_BEGIN ? ATRACE_REC_FUNC_ENTRY : ATRACE_REC_FUNC_EXIT,
			 BPF_RB_NO_WAKEUP);
		return 0;
	}
	n = usdt_nargs(ctx);
	r = reserve(&cpu, sizeof(*r), ATRACE_REC_USDT, ts, pid_tgid >> 32, (__u32)pid_tgid);
	if (!r)
		return 0;
	fill_hdr(&r->hdr, ts, pid_tgid >> 32, (__u32)pid_tgid, id, cpu, ATRACE_REC_USDT);
	r->nargs = n;
	r->str_mask = 0;
	usdt_args(ctx, r, n);
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	return 0;
}

/* Copies a NUL-terminated string from the process, faulting its page in if
 * need be (Linux 6.12+): string literals a program passes but never reads
 * itself sit on pages not yet mapped, which bpf_probe_read_user_str()
 * cannot read. Needs a sleepable program. Weak: a kernel without it still
 * loads everything else (usdt_hit_str is then not loaded). */
extern int bpf_copy_from_user_str(void *dst, __u32 dst__sz, const void *unsafe_ptr__ign,
				  __u64 flags) __ksym __weak;

/* An event with string arguments (the spec's `str`). `can_fault`: copy
 * with bpf_copy_from_user_str() (sleepable program), else with
 * bpf_probe_read_user_str(), which fails on a page not yet mapped in: the
 * string is then recorded empty. */
static __always_inline int usdt_str_event(struct pt_regs *ctx, bool can_fault)
{
	__u64 ts = bpf_ktime_get_ns();
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u64 cookie = bpf_usdt_cookie(ctx);
	__u32 id = (__u32)cookie, mask = (cookie >> 40) & 0x3f;
	struct atrace_rec_usdt_str *rs;
	const void *src;
	__u32 cpu;
	int n, i, slot = 0;
	long got;

	if (filter_functions && !traced(pid_tgid >> 32))
		return 0;
	if (before_exec || stopping)
		return 0;
	n = usdt_nargs(ctx);
	rs = reserve(&cpu, sizeof(*rs), ATRACE_REC_USDT, ts, pid_tgid >> 32,
		     (__u32)pid_tgid);
	if (!rs)
		return 0;
	fill_hdr(&rs->u.hdr, ts, pid_tgid >> 32, (__u32)pid_tgid, id, cpu, ATRACE_REC_USDT);
	rs->u.nargs = n;
	usdt_args(ctx, &rs->u, n);
	rs->u.str_mask = 0;
#pragma unroll
	for (i = 0; i < ATRACE_USDT_MAX_ARGS; i++) {
		if (!(mask & (1u << i)) || i >= n || slot >= ATRACE_USDT_MAX_STRS)
			continue;
		src = (const void *)rs->u.args[i];
		if (can_fault)
			got = bpf_copy_from_user_str(rs->str[slot & 1], ATRACE_USDT_STR_LEN, src, 0);
		else
			got = bpf_probe_read_user_str(rs->str[slot & 1], ATRACE_USDT_STR_LEN, src);
		if (got < 0)
			rs->str[slot & 1][0] = 0;
		rs->u.str_mask |= 1u << i;
		slot++;
	}
	bpf_ringbuf_submit(rs, BPF_RB_NO_WAKEUP);
	return 0;
}

/* Sleepable, so the copy may fault. (libbpf 1.1 has no "usdt.s" section; a
 * sleepable uprobe program is the same program type, and libbpf's USDT
 * attach takes it.) */
SEC("uprobe.s")
int usdt_hit_str(struct pt_regs *ctx)
{
	return usdt_str_event(ctx, true);
}

SEC("uprobe")
int usdt_hit_str_nofault(struct pt_regs *ctx)
{
	return usdt_str_event(ctx, false);
}
