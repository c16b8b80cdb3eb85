/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User call stacks at function entries (record --stack): part of
 * atrace.bpf.c, included at its end (its helpers, maps and settings).
 *
 *   func_entry_stack  a function entry with the thread's user call stack
 *
 * Only functions named by --stack are attached with it (record/attach.cpp),
 * so every other function runs exactly the programs it ran before. It
 * emits a stack record, then the function's values record when it has one
 * (--args), then the plain entry record (emit_func): the filters and their
 * statistics are those of the plain program and never see the stack. The
 * recorder joins the stack to the thread's next entry record of the
 * function (record/stack_joiner.cpp) and drops it when that entry was not
 * emitted.
 *
 * The probe sits on the function's first instruction, where its frame is
 * not built yet: a frame-pointer walk from rbp starts at the caller's
 * caller. The return address at [rsp] is recorded beside the walk, and
 * the recorder puts it back in second place when the kernel's walk lacks
 * it (kernels since 6.11 add it themselves at a push %rbp / endbr64).
 */

const volatile __u32 stack_depth = ATRACE_STACK_SMALL; /* frames to keep, 1..ATRACE_STACK_MAX */
const volatile bool stack_values = false; /* some functions also have --args */

static __always_inline void stack_fill(struct pt_regs *ctx, __u64 *ret_addr, __u32 *nframes,
				       __u64 *ips, __u32 room)
{
	__u32 want = stack_depth < room ? stack_depth : room;
	long got;

	if (bpf_probe_read_user(ret_addr, sizeof(*ret_addr), (const void *)PT_REGS_SP(ctx)))
		*ret_addr = 0;
	got = bpf_get_stack(ctx, ips, want * sizeof(__u64), BPF_F_USER_STACK);
	*nframes = got > 0 ? (__u32)(got / sizeof(__u64)) : 0;
}

static __always_inline void emit_stack(struct pt_regs *ctx)
{
	__u64 ts = bpf_ktime_get_ns();
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 id = (__u32)bpf_get_attach_cookie(ctx);
	__u32 cpu;

	if (filter_functions && !traced(pid_tgid >> 32))
		return;
	if (before_exec || stopping)
		return;
	if (filtering) {
		struct atrace_fn_state *st = bpf_map_lookup_elem(&fn_state, &id);

		if (st && st->off)
			return; /* its entry will not be recorded */
	}
	/* stack_depth is constant at load: one of the two branches remains. */
	if (stack_depth <= ATRACE_STACK_SMALL) {
		struct atrace_rec_stack *r = reserve(&cpu, sizeof(*r), ATRACE_REC_FUNC_STACK, ts,
						     pid_tgid >> 32, (__u32)pid_tgid);

		if (!r)
			return;
		fill_hdr(&r->hdr, ts, pid_tgid >> 32, (__u32)pid_tgid, id, cpu,
			 ATRACE_REC_FUNC_STACK);
		r->pad = 0;
		stack_fill(ctx, &r->ret_addr, &r->nframes, r->ips, ATRACE_STACK_SMALL);
		bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	} else {
		struct atrace_rec_stack_big *r = reserve(&cpu, sizeof(*r), ATRACE_REC_FUNC_STACK, ts,
							 pid_tgid >> 32, (__u32)pid_tgid);

		if (!r)
			return;
		fill_hdr(&r->hdr, ts, pid_tgid >> 32, (__u32)pid_tgid, id, cpu,
			 ATRACE_REC_FUNC_STACK);
		r->pad = 0;
		stack_fill(ctx, &r->ret_addr, &r->nframes, r->ips, ATRACE_STACK_MAX);
		bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	}
}

SEC("uprobe")
int func_entry_stack(struct pt_regs *ctx)
{
	emit_stack(ctx);
	if (stack_values)
		emit_values(ctx, ATRACE_REC_FUNC_ENTRY, false);
	return emit_func(ctx, ATRACE_REC_FUNC_ENTRY);
}
