/* The maps every atrace BPF object shares: atrace.bpf.c creates them and
 * unwind.bpf.c reuses their fds (bpf_map__reuse_fd), so both must declare
 * them exactly alike; one definition, included by both. */
#ifndef ATRACE_BPF_SHARED_MAPS_H
#define ATRACE_BPF_SHARED_MAPS_H

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
	__uint(max_entries, ATRACE_LOST_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, __u8);
} traced_tgids SEC(".maps");

/* Per thread, losses its next record's GAP record tells (reserve.bpf.h). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ATRACE_LOSSY_THREADS);
	__type(key, __u32);
	__type(value, __u64);
} thread_lost SEC(".maps");

/* Entries of thread_lost (a hint: may lag), so that the normal path skips
 * the hash while no thread has losses waiting. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} lossy_threads SEC(".maps");

/* Each thread's unwind state (bpf/unwind.h; written by unwind.bpf.c, read
 * by atrace.bpf.c's function programs). Needs bpf/unwind.h. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct atrace_unwind_state);
} unwind_states SEC(".maps");

#endif
