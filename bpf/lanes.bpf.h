/* The per-CPU lanes of function entries and exits (struct atrace_lane_ctl
 * in bpf/atrace.h says why they are not the rings). Needs reserve.bpf.h
 * (loss counts, the thread's GAP rule). Only atrace.bpf.c writes lanes. */
#ifndef ATRACE_BPF_LANES_H
#define ATRACE_BPF_LANES_H

/* Slots per CPU, a power of two, set by the recorder before load; 0: no
 * lanes, every record goes to the rings. */
const volatile __u32 lane_slots = 0;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1); /* resized to the CPU count */
	__type(key, __u32);
	__type(value, struct atrace_lane_ctl);
} lane_ctl SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1); /* resized to CPUs x lane_slots */
	__type(key, __u32);
	__type(value, struct atrace_lane_slot);
} lane_data SEC(".maps");

/* A free slot of this CPU's lane, claimed, or 0 when the lane is full. A
 * program preempted between reading the producer index and claiming it
 * finds the index moved on: it tries once more, then counts a loss rather
 * than spin. The consumer index is read before the producer index: read
 * after, it can be past it (the program preempted between the two reads
 * while others wrote and the recorder read), which looked like a full
 * lane; read before, it is at worst a little old. The index is
 * claimed only while the lane has room for it, so no claimed slot is ever
 * one the recorder has not read. */
static __always_inline struct atrace_lane_slot *lane_claim(__u32 cpu, __u64 *seq)
{
	struct atrace_lane_ctl *l = bpf_map_lookup_elem(&lane_ctl, &cpu);
	__u64 c, p;
	__u32 k;
	int i;

	if (!l)
		return 0;
	for (i = 0; i < 2; i++) {
		c = *(volatile __u64 *)&l->cons;
		p = *(volatile __u64 *)&l->prod;
		if (p - c >= lane_slots)
			return 0;
		if (__sync_val_compare_and_swap(&l->prod, p, p + 1) == p) {
			k = cpu * lane_slots + (__u32)(p & (lane_slots - 1));
			*seq = p + 1;
			return bpf_map_lookup_elem(&lane_data, &k);
		}
	}
	return 0;
}

/* The record is complete: x86 keeps stores in order, so the compiler
 * barrier is all it takes for the recorder to see the record once it sees
 * the sequence number. (A claimed slot the lookup did not return cannot
 * happen: the key is always below CPUs x lane_slots.) */
static __always_inline void lane_publish(struct atrace_lane_slot *s, __u64 seq)
{
	asm volatile("" ::: "memory");
	*(volatile __u64 *)&s->seq = seq;
}

/* emit_gap (reserve.bpf.h) for a lane: the count goes in hdr.id. */
static __always_inline bool lane_gap(__u32 cpu, __u64 ts, __u32 tgid, __u32 tid)
{
	__u64 *n = bpf_map_lookup_elem(&thread_lost, &tid);
	struct atrace_lane_slot *s;
	__u64 seq;

	if (!n)
		return true;
	s = lane_claim(cpu, &seq);
	if (!s)
		return false;
	fill_hdr(&s->hdr, ts, tgid, tid, *n > 0xffffffffULL ? 0xffffffffU : (__u32)*n, cpu,
		 ATRACE_REC_GAP);
	lane_publish(s, seq);
	if (bpf_map_delete_elem(&thread_lost, &tid) == 0)
		lossy_add(-1);
	return true;
}

/* A header-only record through this CPU's lane, by reserve()'s rules: after
 * the thread's GAP record, or not at all (counted for its kind and thread). */
static __always_inline bool lane_emit(__u64 ts, __u64 pid_tgid, __u32 id, __u16 kind)
{
	__u32 cpu = bpf_get_smp_processor_id(), tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	struct atrace_lane_slot *s = 0;
	__u64 seq = 0;

	if (!any_lossy() || lane_gap(cpu, ts, tgid, tid))
		s = lane_claim(cpu, &seq);
	if (!s) {
		count_lost(kind);
		note_thread_loss(tid);
		return false;
	}
	fill_hdr(&s->hdr, ts, tgid, tid, id, cpu, kind);
	lane_publish(s, seq);
	return true;
}

#endif
