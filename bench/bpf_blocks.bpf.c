// SPDX-License-Identifier: GPL-2.0
/*
 * What the pieces of a recording uprobe program cost: each program below
 * adds one building block of atrace's record path (bpf/atrace.bpf.c,
 * emit_func) or of bpftrace's count(). bpf_blocks.c attaches them one at a
 * time to a function of uprobe_target and reads the kernel's run-time
 * statistics (BPF_ENABLE_STATS). The record layout mirrors
 * struct atrace_rec_hdr (24 bytes) without including it, so that this file
 * builds on its own.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} counter SEC(".maps");

struct ring {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 24);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1); /* set to the CPU count by the loader */
	__type(key, __u32);
	__array(values, struct ring);
} rings SEC(".maps");

struct rec {
	__u64 ts;
	__u32 tgid, tid, id;
	__u16 cpu, kind;
};

#define HALF (1ULL << 23)

static __always_inline void *ring_of_cpu(__u32 *cpu)
{
	*cpu = bpf_get_smp_processor_id();
	return bpf_map_lookup_elem(&rings, cpu);
}

SEC("uprobe") int empty(void *ctx) { return 0; }

SEC("uprobe") int count(void *ctx)
{
	__u32 k = 0;
	__u64 *v = bpf_map_lookup_elem(&counter, &k);

	if (v)
		*v += 1;
	return 0;
}

SEC("uprobe") int ktime(void *ctx)
{
	__u32 k = 0;
	__u64 *v = bpf_map_lookup_elem(&counter, &k);

	if (v)
		*v += bpf_ktime_get_ns();
	return 0;
}

SEC("uprobe") int ids(void *ctx)
{
	__u32 k = 0;
	__u64 *v = bpf_map_lookup_elem(&counter, &k);

	if (v)
		*v += bpf_get_current_pid_tgid() + bpf_get_attach_cookie(ctx) +
		      bpf_get_smp_processor_id();
	return 0;
}

SEC("uprobe") int reserve_submit(void *ctx)
{
	__u32 cpu;
	void *rb = ring_of_cpu(&cpu);
	struct rec *r;

	if (!rb)
		return 0;
	r = bpf_ringbuf_reserve(rb, sizeof(*r), 0);
	if (!r)
		return 0;
	r->ts = 1;
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	return 0;
}

SEC("uprobe") int reserve_query_submit(void *ctx)
{
	__u32 cpu;
	void *rb = ring_of_cpu(&cpu);
	struct rec *r;
	__u64 flags = BPF_RB_NO_WAKEUP;

	if (!rb)
		return 0;
	r = bpf_ringbuf_reserve(rb, sizeof(*r), 0);
	if (!r)
		return 0;
	r->ts = 1;
	if (bpf_ringbuf_query(rb, BPF_RB_AVAIL_DATA) > HALF)
		flags = BPF_RB_FORCE_WAKEUP;
	bpf_ringbuf_submit(r, flags);
	return 0;
}

/* The whole record path of atrace's func_entry/func_exit (bpf/atrace.bpf.c,
 * emit_func, as of commit 154b546: no ring query, never a wake-up). */
SEC("uprobe") int record(void *ctx)
{
	__u64 ts = bpf_ktime_get_ns();
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 cpu;
	void *rb = ring_of_cpu(&cpu);
	struct rec *r;

	if (!rb)
		return 0;
	r = bpf_ringbuf_reserve(rb, sizeof(*r), 0);
	if (!r)
		return 0;
	r->ts = ts;
	r->tgid = pid_tgid >> 32;
	r->tid = (__u32)pid_tgid;
	r->id = (__u32)bpf_get_attach_cookie(ctx);
	r->cpu = cpu;
	r->kind = 1;
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	return 0;
}

/* The record path before commit 154b546: the same plus a ring query per
 * record, forcing a wake-up when the ring is more than half full. */
SEC("uprobe") int record_query(void *ctx)
{
	__u64 ts = bpf_ktime_get_ns();
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u64 flags = BPF_RB_NO_WAKEUP;
	__u32 cpu;
	void *rb = ring_of_cpu(&cpu);
	struct rec *r;

	if (!rb)
		return 0;
	r = bpf_ringbuf_reserve(rb, sizeof(*r), 0);
	if (!r)
		return 0;
	r->ts = ts;
	r->tgid = pid_tgid >> 32;
	r->tid = (__u32)pid_tgid;
	r->id = (__u32)bpf_get_attach_cookie(ctx);
	r->cpu = cpu;
	r->kind = 1;
	if (bpf_ringbuf_query(rb, BPF_RB_AVAIL_DATA) > HALF)
		flags = BPF_RB_FORCE_WAKEUP;
	bpf_ringbuf_submit(r, flags);
	return 0;
}

/* A wake-up for every record (no reader is waiting). */
SEC("uprobe") int force_wakeup(void *ctx)
{
	__u32 cpu;
	void *rb = ring_of_cpu(&cpu);
	struct rec *r;

	if (!rb)
		return 0;
	r = bpf_ringbuf_reserve(rb, sizeof(*r), 0);
	if (!r)
		return 0;
	r->ts = 1;
	bpf_ringbuf_submit(r, BPF_RB_FORCE_WAKEUP);
	return 0;
}

/* ---- a per-CPU slot lane instead of the ring buffer ------------------------
 * Fixed 32-byte slots in an array map (mmap-able by the reader), one lane of
 * LANE_SLOTS per CPU; the producer index is claimed with a compare-and-swap
 * so that a program preempted between reading and claiming it cannot take
 * a slot the reader has not freed; a slot is published by its sequence
 * number, written last. */
#define LANE_SLOTS (1u << 16)

struct lane {
	__u64 prod;
	__u64 pad1[7];
	__u64 cons;
	__u64 pad2[7];
};
struct slot {
	__u64 seq;
	struct rec rec;
};
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1); /* the CPU count, set by the loader */
	__type(key, __u32);
	__type(value, struct lane);
} lanes SEC(".maps");
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1); /* CPUs x LANE_SLOTS, set by the loader */
	__type(key, __u32);
	__type(value, struct slot);
} slots SEC(".maps");

static __always_inline struct slot *lane_claim(__u32 cpu, __u64 *seq)
{
	struct lane *l = bpf_map_lookup_elem(&lanes, &cpu);
	__u64 p;
	__u32 k;

	if (!l)
		return 0;
	p = *(volatile __u64 *)&l->prod;
	if (p - *(volatile __u64 *)&l->cons >= LANE_SLOTS)
		return 0;
	if (__sync_val_compare_and_swap(&l->prod, p, p + 1) != p)
		return 0;
	k = cpu * LANE_SLOTS + (__u32)(p & (LANE_SLOTS - 1));
	*seq = p + 1;
	return bpf_map_lookup_elem(&slots, &k);
}

SEC("uprobe") int lane_claim_publish(void *ctx)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct slot *s;
	__u64 seq;

	s = lane_claim(cpu, &seq);
	if (!s)
		return 0;
	s->rec.ts = 1;
	asm volatile("" ::: "memory");
	*(volatile __u64 *)&s->seq = seq;
	return 0;
}

/* atrace's record path (`record` above) on a slot lane. */
SEC("uprobe") int record_lane(void *ctx)
{
	__u64 ts = bpf_ktime_get_ns();
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 cpu = bpf_get_smp_processor_id();
	struct slot *s;
	__u64 seq;

	s = lane_claim(cpu, &seq);
	if (!s)
		return 0;
	s->rec.ts = ts;
	s->rec.tgid = pid_tgid >> 32;
	s->rec.tid = (__u32)pid_tgid;
	s->rec.id = (__u32)bpf_get_attach_cookie(ctx);
	s->rec.cpu = cpu;
	s->rec.kind = 1;
	asm volatile("" ::: "memory");
	*(volatile __u64 *)&s->seq = seq;
	return 0;
}
