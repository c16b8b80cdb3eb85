/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Function arguments and return values (record --args / --retval): part of
 * atrace.bpf.c, included at its end (its helpers, maps and settings).
 *
 *   func_entry_values(_nofault)  a function entry with its argument registers
 *   func_exit_values(_nofault)   a function exit with its return register
 *
 * Only functions with a spec are attached with these (record/attach.cpp).
 * Each runs emit_func first, so the entry and exit records, the filters
 * and their statistics are exactly those of the plain programs, and writes
 * the values record only when emit_func recorded the hit: one decision, so
 * a hit that two links of one function see while its link group is rebuilt
 * (bpf/atrace.bpf.c, struct hit_mark) has one values record, or none when
 * its event was not recorded. The values record follows its event in the
 * same ring with the same time stamp, thread and function id: the
 * recorder joins it to that event (record/func_values.h). Its loss (a full
 * ring) is counted for its kind but is no gap in the thread's events: the
 * call is there, without its values. The filters never look at the values.
 *
 * Strings are copied like the USDT ones: with bpf_copy_from_user_str() in
 * the sleepable variants (a page not yet mapped in is faulted in), with
 * bpf_probe_read_user_str() in the _nofault ones (such a string is then
 * recorded as unreadable).
 */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* resized to the probe count + 1 by the recorder */
	__type(key, __u32);
	__type(value, struct atrace_value_spec);
} fn_values SEC(".maps");

/* One string into dst (ATRACE_VALUE_STR_LEN bytes, NUL-terminated); its state. */
static __always_inline __u8 value_str(char *dst, __u64 addr, bool can_fault)
{
	char next = 0;
	long got;

	dst[0] = 0;
	if (!addr)
		return ATRACE_STR_NULL;
	if (can_fault)
		got = bpf_copy_from_user_str(dst, ATRACE_VALUE_STR_LEN, (const void *)addr, 0);
	else
		got = bpf_probe_read_user_str(dst, ATRACE_VALUE_STR_LEN, (const void *)addr);
	if (got < 0) {
		dst[0] = 0;
		return ATRACE_STR_UNREADABLE;
	}
	/* A full buffer: cut, unless the byte after the copied ones ends it. */
	if (got >= ATRACE_VALUE_STR_LEN &&
	    (bpf_probe_read_user(&next, 1, (const void *)(addr + ATRACE_VALUE_STR_LEN - 1)) ||
	     next))
		return ATRACE_STR_CUT;
	return ATRACE_STR_OK;
}

static __always_inline void fill_values(struct pt_regs *ctx, struct atrace_rec_values *r,
					__u16 kind)
{
	r->of_kind = kind;
	r->nstr = 0;
	r->str_state[0] = r->str_state[1] = 0;
	r->pad[0] = r->pad[1] = r->pad[2] = 0;
	if (kind == ATRACE_REC_FUNC_ENTRY) {
		/* x86-64 SysV integer argument registers, in order */
		r->regs[0] = ctx->di;
		r->regs[1] = ctx->si;
		r->regs[2] = ctx->dx;
		r->regs[3] = ctx->cx;
		r->regs[4] = ctx->r8;
		r->regs[5] = ctx->r9;
	} else {
		r->regs[0] = ctx->ax;
		r->regs[1] = r->regs[2] = r->regs[3] = r->regs[4] = r->regs[5] = 0;
	}
}

/* The values record of a hit emit_func recorded. */
static __always_inline void emit_values(struct pt_regs *ctx, __u16 kind, const struct func_hit *h,
					bool can_fault)
{
	__u32 id = (__u32)h->cookie, tgid = h->pid_tgid >> 32, tid = (__u32)h->pid_tgid;
	struct atrace_value_spec *spec;
	struct atrace_rec_values_str *rs;
	struct atrace_rec_values *r;
	__u32 cpu, nstr, i;

	spec = bpf_map_lookup_elem(&fn_values, &id);
	if (!spec || !(kind == ATRACE_REC_FUNC_ENTRY ? spec->entry : spec->exit))
		return;
	nstr = kind == ATRACE_REC_FUNC_ENTRY ? spec->nstr : (spec->ret_str ? 1 : 0);
	if (!nstr) {
		r = ring_reserve(&cpu, sizeof(*r));
		if (!r) {
			count_lost(ATRACE_REC_FUNC_VALUES);
			return;
		}
		fill_hdr(&r->hdr, h->ts, tgid, tid, id, cpu, ATRACE_REC_FUNC_VALUES);
		fill_values(ctx, r, kind);
		bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
		return;
	}
	rs = ring_reserve(&cpu, sizeof(*rs));
	if (!rs) {
		count_lost(ATRACE_REC_FUNC_VALUES);
		return;
	}
	fill_hdr(&rs->v.hdr, h->ts, tgid, tid, id, cpu, ATRACE_REC_FUNC_VALUES);
	fill_values(ctx, &rs->v, kind);
	rs->str[1][0] = 0;
#pragma unroll
	for (i = 0; i < ATRACE_VALUE_STRS; i++) {
		/* & 7: a bound the verifier sees (the recorder writes 0-5) */
		__u32 reg = kind == ATRACE_REC_FUNC_ENTRY ? spec->str_arg[i] & 7 : 0;

		if (i >= nstr)
			break;
		if (reg >= ATRACE_VALUE_REGS)
			reg = 0;
		rs->v.str_state[i] = value_str(rs->str[i], rs->v.regs[reg], can_fault);
	}
	rs->v.nstr = nstr;
	bpf_ringbuf_submit(rs, BPF_RB_NO_WAKEUP);
}

static __always_inline int func_values(struct pt_regs *ctx, __u16 kind, bool can_fault)
{
	struct func_hit h;

	if (emit_func(ctx, kind, &h, false))
		emit_values(ctx, kind, &h, can_fault);
	return 0;
}

SEC("uprobe.s")
int func_entry_values(struct pt_regs *ctx)
{
	return func_values(ctx, ATRACE_REC_FUNC_ENTRY, true);
}

SEC("uprobe")
int func_entry_values_nofault(struct pt_regs *ctx)
{
	return func_values(ctx, ATRACE_REC_FUNC_ENTRY, false);
}

SEC("uretprobe.s")
int func_exit_values(struct pt_regs *ctx)
{
	return func_values(ctx, ATRACE_REC_FUNC_EXIT, true);
}

SEC("uretprobe")
int func_exit_values_nofault(struct pt_regs *ctx)
{
	return func_values(ctx, ATRACE_REC_FUNC_EXIT, false);
}
