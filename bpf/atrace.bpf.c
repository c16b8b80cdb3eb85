// SPDX-License-Identifier: GPL-2.0
/*
 * atrace's BPF programs. They only stamp and hand over records: every
 * decision (what to probe, how to order, what to keep) is in user space.
 *
 *   rings          one ring buffer per CPU (array of ringbufs): no shared lock
 *   lost           per-CPU, per-kind count of records that found no room
 *   traced_tgids   processes whose kernel events are recorded
 *   func_entry     uprobe on a function's entry: cookie = function id
 *   func_exit      uretprobe of the same function
 *   thread_exit    sched_process_exit: a traced thread's final name
 *
 * Wake-ups: records are submitted with BPF_RB_NO_WAKEUP and the recorder
 * drains on a timer sized so that a ring cannot fill between two drains, so
 * no traced call ever pays for waking user space (a forced wake-up costs
 * about 8.5 us in the traced thread on a KVM guest: docs/BENCHMARKS.md).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bpf/atrace.h"

char LICENSE[] SEC("license") = "GPL";

#define ATRACE_KIND_SLOTS 8

struct ring {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22); /* resized by the recorder before load */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, ATRACE_MAX_CPUS); /* resized to the CPU count */
	__type(key, __u32);
	__array(values, struct ring);
} rings SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, ATRACE_KIND_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u8);
} traced_tgids SEC(".maps");

static __always_inline void count_lost(__u32 kind)
{
	__u64 *n = bpf_map_lookup_elem(&lost, &kind);

	if (n)
		*n += 1;
}

static __always_inline void *reserve(__u32 *cpu, __u64 size, __u32 kind)
{
	void *rb, *rec;

	*cpu = bpf_get_smp_processor_id();
	rb = bpf_map_lookup_elem(&rings, cpu);
	if (!rb) {
		count_lost(kind);
		return 0;
	}
	rec = bpf_ringbuf_reserve(rb, size, 0);
	if (!rec)
		count_lost(kind);
	return rec;
}

static __always_inline int emit_func(void *ctx, __u16 kind)
{
	__u64 ts = bpf_ktime_get_ns();
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct atrace_rec_hdr *r;
	__u32 cpu;

	r = reserve(&cpu, sizeof(*r), kind);
	if (!r)
		return 0;
	r->ts = ts;
	r->tgid = pid_tgid >> 32;
	r->tid = (__u32)pid_tgid;
	r->id = (__u32)bpf_get_attach_cookie(ctx);
	r->cpu = cpu;
	r->kind = kind;
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	return 0;
}

SEC("uprobe")
int func_entry(struct pt_regs *ctx)
{
	return emit_func(ctx, ATRACE_REC_FUNC_ENTRY);
}

SEC("uretprobe")
int func_exit(struct pt_regs *ctx)
{
	return emit_func(ctx, ATRACE_REC_FUNC_EXIT);
}

SEC("raw_tp/sched_process_exit")
int thread_exit(void *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32;
	struct atrace_rec_comm *r;
	__u32 cpu;

	if (!bpf_map_lookup_elem(&traced_tgids, &tgid))
		return 0;
	r = reserve(&cpu, sizeof(*r), ATRACE_REC_THREAD_EXIT);
	if (!r)
		return 0;
	r->hdr.ts = bpf_ktime_get_ns();
	r->hdr.tgid = tgid;
	r->hdr.tid = (__u32)pid_tgid;
	r->hdr.id = 0;
	r->hdr.cpu = cpu;
	r->hdr.kind = ATRACE_REC_THREAD_EXIT;
	bpf_get_current_comm(r->comm, sizeof(r->comm));
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	return 0;
}
