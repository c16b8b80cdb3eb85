/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User call stacks at function entries (record --stack): part of
 * atrace.bpf.c, included at its end (its helpers, maps and settings).
 *
 *   func_entry_stack  a function entry with the thread's user call stack
 *
 * Only functions named by --stack are attached with it (record/attach.cpp),
 * so every other function runs exactly the programs it ran before. It runs
 * emit_func first, so the entry record, the filters and their statistics
 * are those of the plain program (the filters never see the stack), and
 * writes the rest only when emit_func recorded the entry: the function's
 * values record when it has one (--args), then the stack record, each
 * stamped with the entry's time, thread and id. One decision, as for the
 * values (bpf/atrace_values.bpf.h): a hit two links see during a rebuild
 * gets one stack or none. The recorder joins the stack to that entry
 * (record/stack_joiner.h). A stack that finds no room in the ring is
 * counted lost for its kind, but is no gap in the thread's events.
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

/* The stack record of an entry emit_func recorded. */
static __always_inline void emit_stack(struct pt_regs *ctx, const struct func_hit *h)
{
	__u32 id = (__u32)h->cookie, tgid = h->pid_tgid >> 32, tid = (__u32)h->pid_tgid;
	__u32 cpu;

	/* stack_depth is constant at load: one of the two branches remains. */
	if (stack_depth <= ATRACE_STACK_SMALL) {
		struct atrace_rec_stack *r = ring_reserve(&cpu, sizeof(*r));

		if (!r) {
			count_lost(ATRACE_REC_FUNC_STACK);
			return;
		}
		fill_hdr(&r->hdr, h->ts, tgid, tid, id, cpu, ATRACE_REC_FUNC_STACK);
		r->pad = 0;
		stack_fill(ctx, &r->ret_addr, &r->nframes, r->ips, ATRACE_STACK_SMALL);
		bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	} else {
		struct atrace_rec_stack_big *r = ring_reserve(&cpu, sizeof(*r));

		if (!r) {
			count_lost(ATRACE_REC_FUNC_STACK);
			return;
		}
		fill_hdr(&r->hdr, h->ts, tgid, tid, id, cpu, ATRACE_REC_FUNC_STACK);
		r->pad = 0;
		stack_fill(ctx, &r->ret_addr, &r->nframes, r->ips, ATRACE_STACK_MAX);
		bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	}
}

SEC("uprobe")
int func_entry_stack(struct pt_regs *ctx)
{
	struct func_hit h;

	if (!emit_func(ctx, ATRACE_REC_FUNC_ENTRY, &h, false))
		return 0;
	if (stack_values)
		emit_values(ctx, ATRACE_REC_FUNC_ENTRY, &h, false);
	emit_stack(ctx, &h);
	return 0;
}
