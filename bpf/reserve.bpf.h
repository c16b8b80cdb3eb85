/* How every record of atrace's BPF objects (atrace.bpf.c, unwind.bpf.c)
 * gets its room: one ring per CPU, the per-CPU/per-kind lost counts, and
 * the per-thread GAP records that say where a thread's events were lost.
 * Needs the maps of shared_maps.h. */
#ifndef ATRACE_BPF_RESERVE_H
#define ATRACE_BPF_RESERVE_H

static __always_inline void fill_hdr(struct atrace_rec_hdr *h, __u64 ts, __u32 tgid, __u32 tid,
				     __u32 id, __u32 cpu, __u16 kind)
{
	h->ts = ts;
	h->tgid = tgid;
	h->tid = tid;
	h->id = id;
	h->cpu = cpu;
	h->kind = kind;
}

static __always_inline void count_lost(__u32 kind)
{
	__u64 *n = bpf_map_lookup_elem(&lost, &kind);

	if (n)
		*n += 1;
}

/* Room in this CPU's ring, or 0; counts nothing. */
static __always_inline void *ring_reserve(__u32 *cpu, __u64 size)
{
	void *rb;

	*cpu = bpf_get_smp_processor_id();
	rb = bpf_map_lookup_elem(&rings, cpu);
	return rb ? bpf_ringbuf_reserve(rb, size, 0) : 0;
}

/*
 * Where in a thread's stream events were lost (issue 18). The per-CPU
 * counts say how many, not whose: a thread that lost an entry and then
 * recorded its exit would have the exit paired with an older, unrelated
 * entry of the same function. So a failed reservation also counts for the
 * thread, and the thread's next record that finds room is preceded by a
 * GAP record saying how many of its events are missing there; the replay
 * pairs no call across it.
 *
 * The normal path pays one load of lossy_threads (an array the verifier
 * inlines: no helper call) while no thread has losses waiting, one hash
 * lookup otherwise.
 * A hash keyed by tid works on every kernel atrace supports; a thread that
 * never records again (it exited while the ring was full) keeps its entry
 * until the end, bounded by ATRACE_LOSSY_THREADS (beyond it, losses are
 * only counted per CPU, as before).
 */

static __always_inline void lossy_add(__s32 d)
{
	__u32 zero = 0, *n = bpf_map_lookup_elem(&lossy_threads, &zero);

	if (n)
		__sync_fetch_and_add(n, d);
}

static __always_inline bool any_lossy(void)
{
	__u32 zero = 0, *n = bpf_map_lookup_elem(&lossy_threads, &zero);

	return n && *n;
}

static __always_inline void note_thread_loss(__u32 tid)
{
	__u64 one = 1, *n = bpf_map_lookup_elem(&thread_lost, &tid);

	if (n) {
		__sync_fetch_and_add(n, 1);
		return;
	}
	if (bpf_map_update_elem(&thread_lost, &tid, &one, BPF_NOEXIST) == 0)
		lossy_add(1);
}

/* The thread's GAP record, before its record stamped `ts`; whether the
 * thread may write that record: false while its losses wait for a GAP the
 * ring had no room for. */
static __always_inline bool emit_gap(__u64 ts, __u32 tgid, __u32 tid)
{
	struct atrace_rec_args *r;
	__u64 *n = bpf_map_lookup_elem(&thread_lost, &tid);
	__u32 cpu;

	if (!n)
		return true;
	r = ring_reserve(&cpu, sizeof(*r));
	if (!r)
		return false; /* still full: the count waits for the next record */
	fill_hdr(&r->hdr, ts, tgid, tid, 0, cpu, ATRACE_REC_GAP);
	r->arg0 = *n;
	r->arg1 = 0;
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	if (bpf_map_delete_elem(&thread_lost, &tid) == 0)
		lossy_add(-1);
	return true;
}

/* Room for a record of thread `tid` stamped `ts`, after the thread's GAP
 * record if it has losses waiting; a failure counts for its CPU and kind
 * and for the thread. A record never goes in without the GAP before it:
 * a smaller record may fit where the GAP did not, and would then follow
 * the hole unmarked (an exit paired with an unrelated entry). */
static __always_inline void *reserve(__u32 *cpu, __u64 size, __u32 kind, __u64 ts, __u32 tgid,
				     __u32 tid)
{
	void *rec = NULL;

	if (!any_lossy() || emit_gap(ts, tgid, tid))
		rec = ring_reserve(cpu, size);
	if (!rec) {
		count_lost(kind);
		note_thread_loss(tid);
	}
	return rec;
}

#endif
