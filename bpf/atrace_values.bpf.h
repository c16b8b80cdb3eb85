/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Function arguments and return values (record --args / --retval): part of
 * atrace.bpf.c, included at its end (its helpers, maps and settings).
 *
 *   func_entry_values(_nofault)  a function entry with its argument registers
 *   func_exit_values(_nofault)   a function exit with its return register
 *
 * Only functions with a spec are attached with these (record/attach.cpp);
 * each emits its values record and then calls emit_func, so the entry and
 * exit records, the filters and their statistics are exactly those of the
 * plain programs. The values record comes first, in the same ring: the
 * recorder joins it to the thread's next entry or exit record of the same
 * function, and drops it when that record was not emitted (a filter had
 * turned the function off, the ring was full). The filters never look at
 * the values.
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

static __always_inline void emit_values(struct pt_regs *ctx, __u16 kind, bool can_fault)
{
	__u64 ts = bpf_ktime_get_ns();
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 id = (__u32)bpf_get_attach_cookie(ctx);
	struct atrace_value_spec *spec;
	struct atrace_rec_values_str *rs;
	struct atrace_rec_values *r;
	__u32 cpu, nstr, i;

	if (filter_functions && !traced(pid_tgid >> 32))
		return;
	/* At the stop the entry is not recorded; an exit then goes without. */
	if (before_exec || stopping)
		return;
	spec = bpf_map_lookup_elem(&fn_values, &id);
	if (!spec || !(kind == ATRACE_REC_FUNC_ENTRY ? spec->entry : spec->exit))
		return;
	if (filtering) {
		struct atrace_fn_state *st = bpf_map_lookup_elem(&fn_state, &id);

		if (st && st->off)
			return; /* its entry will not be recorded */
	}
	nstr = kind == ATRACE_REC_FUNC_ENTRY ? spec->nstr : (spec->ret_str ? 1 : 0);
	if (!nstr) {
		r = reserve(&cpu, sizeof(*r), ATRACE_REC_FUNC_VALUES, ts, pid_tgid >> 32,
			    (__u32)pid_tgid);
		if (!r)
			return;
		fill_hdr(&r->hdr, ts, pid_tgid >> 32, (__u32)pid_tgid, id, cpu,
			 ATRACE_REC_FUNC_VALUES);
		fill_values(ctx, r, kind);
		bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
		return;
	}
	rs = reserve(&cpu, sizeof(*rs), ATRACE_REC_FUNC_VALUES, ts, pid_tgid >> 32,
		     (__u32)pid_tgid);
	if (!rs)
		return;
	fill_hdr(&rs->v.hdr, ts, pid_tgid >> 32, (__u32)pid_tgid, id, cpu, ATRACE_REC_FUNC_VALUES);
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

SEC("uprobe.s")
int func_entry_values(struct pt_regs *ctx)
{
	emit_values(ctx, ATRACE_REC_FUNC_ENTRY, true);
	return emit_func(ctx, ATRACE_REC_FUNC_ENTRY);
}

SEC("uprobe")
int func_entry_values_nofault(struct pt_regs *ctx)
{
	emit_values(ctx, ATRACE_REC_FUNC_ENTRY, false);
	return emit_func(ctx, ATRACE_REC_FUNC_ENTRY);
}

SEC("uretprobe.s")
int func_exit_values(struct pt_regs *ctx)
{
	emit_values(ctx, ATRACE_REC_FUNC_EXIT, true);
	return emit_func(ctx, ATRACE_REC_FUNC_EXIT);
}

SEC("uretprobe")
int func_exit_values_nofault(struct pt_regs *ctx)
{
	emit_values(ctx, ATRACE_REC_FUNC_EXIT, false);
	return emit_func(ctx, ATRACE_REC_FUNC_EXIT);
}
