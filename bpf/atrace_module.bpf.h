/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The module watch (issue 17): a MODULE_LOAD record when a traced process
 * runs the DT_INIT of a module that has probes, a MODULE_UNLOAD when it
 * runs its DT_FINI. Part of atrace.bpf.c, included at its end; attached
 * only to the watched modules (record/module_watch.h).
 *
 * Why these two places: this kernel has no kprobes and no fentry (see
 * kernel-notes/kernel-tracepoints.md) and no tracepoint names the file an
 * mmap maps, but uprobes are bound to files: DT_INIT is the first code of
 * a module the dynamic linker runs (after mapping and relocating it,
 * before its constructors and before any caller can reach it), once per
 * load; DT_FINI runs once per unload (dlclose before the unmap, or the
 * process's exit). Two probe hits per load, none per traced call.
 */

SEC("uprobe")
int module_hook(struct pt_regs *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u64 cookie = bpf_get_attach_cookie(ctx);
	struct atrace_rec_module *r;
	__u32 tgid = pid_tgid >> 32;
	__u16 kind;
	__u32 cpu;
	__u64 ts;

	if (!traced(tgid))
		return 0;
	kind = (cookie & ATRACE_MODULE_UNLOAD) ? ATRACE_REC_MODULE_UNLOAD : ATRACE_REC_MODULE_LOAD;
	ts = bpf_ktime_get_ns();
	r = reserve(&cpu, sizeof(*r), kind, ts, tgid, (__u32)pid_tgid);
	if (!r)
		return 0;
	fill_hdr(&r->hdr, ts, tgid, (__u32)pid_tgid,
		 cookie & ATRACE_MODULE_INDEX_MASK, cpu, kind);
	/* The kernel sets the ip to the probed address for the handlers. */
	r->base = PT_REGS_IP(ctx) - (cookie >> 32);
	/* A change of the link map is read from /proc at once: a short
	 * process may be gone at the next drain. Once per library load. */
	bpf_ringbuf_submit(r, (cookie & ATRACE_MODULE_INDEX_MASK) == ATRACE_MODULE_LINK_MAP ?
				      BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
	return 0;
}
