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
 *   calls_after_stop  per thread, once the recording stops: calls begun since,
 *                  whose exits are not recorded (stop_gate)
 *   usdt_hit       a USDT probe (libbpf's USDT support reads its arguments)
 *   usdt_hit_str   the same with string arguments (sleepable: may fault pages in)
 *   usdt_hit_str_nofault  the same where the kernel lacks the sleepable copy
 *   thread_exit    sched_process_exit: a traced thread's final name (and the
 *                  process's exit code when it is the last thread); one
 *                  program per signature of the tracepoint
 *   kernel events  tracepoints of the traced processes' threads, by group
 *                  (the recorder loads only the groups asked for):
 *     sched        sched_switch, sched_wakeup(_new), sched_migrate_task
 *     syscalls     sys_enter, sys_exit
 *     faults       page_fault_user
 *     proc         sched_process_fork, sched_process_exec, task_rename
 *
 * All tracepoint programs are tp_btf: typed arguments, no tracefs needed,
 * and this kernel has no kprobes.
 *
 * Kernels differ: where a tracepoint's signature or a kfunc changed, each
 * variant is its own program and the recorder loads the one the running
 * kernel has (userspace/bpf_variants.cpp decides from the kernel's BTF);
 * the others are not loaded, so they cannot stop the rest from loading. Each one first looks the task's process
 * up in traced_tgids: tracepoints fire for every task of the system, and an
 * untraced task must cost no more than that lookup.
 *
 * Wake-ups: records are submitted with BPF_RB_NO_WAKEUP and the recorder
 * drains on a timer sized so that a ring cannot fill between two drains, so
 * no traced call ever pays for waking user space (a forced wake-up costs
 * about 8.5 us in the traced thread on a KVM guest: docs/BENCHMARKS.md).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include <bpf/usdt.bpf.h>

#include "bpf/atrace.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by the recorder before load. */
const volatile bool filter_functions = false; /* probes attached system-wide (--follow-forks) */
/* Relevance filters: off, the programs are exactly as without filters. */
const volatile bool filtering = false;
const volatile __u64 filter_max_calls = 0;     /* 0: no max-calls rule */
const volatile __u64 filter_min_calls = 0;     /* hint: calls on one CPU before judging */
const volatile bool follow_forks = false;     /* children of traced processes join the map */
const volatile bool want_proc = false;        /* the proc group: fork/exec/exit/comm records */
/* The uprobe machinery's own system calls, skipped where the kernel has
 * them (-1: it has not; no real system call has that number). */
const volatile long nr_uretprobe = -1;
const volatile long nr_uprobe = -1;

/* Written by the recorder while the programs run (docs/safety.md).
 * before_exec: a launched target is still atrace's forked child, running
 *   atrace's code up to its execve; nothing is recorded until the
 *   target's exec (sched_process_exec clears it).
 * stopping: the recording is ending; no call starts any more, and only the
 *   calls that started before end (stop_gate). Set before any probe is
 *   detached, so that no exit is recorded without its entry. */
volatile bool before_exec = false;
volatile bool stopping = false;

#include "bpf/shared_maps.h"

static __always_inline bool traced(__u32 tgid)
{
	return !before_exec && bpf_map_lookup_elem(&traced_tgids, &tgid) != 0;
}

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

/* ---- functions ---------------------------------------------------------- */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1); /* resized to the probe count + 1 by the recorder */
	__type(key, __u32);
	__type(value, struct atrace_fn_state);
} fn_state SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1); /* resized like fn_state */
	__type(key, __u32);
	__type(value, struct atrace_fn_stat);
} fn_stat SEC(".maps");

/* Each thread's open calls, to time them: the exit program pops the entry
 * time its entry pushed. Deeper frames are counted, not timed.
 * The times are the thread's clock without the time it spent preempted
 * (runnable, off CPU: other load on the machine, not the function's doing),
 * which the sched_switch program keeps when the sched group is recorded:
 * on a loaded machine a few preemptions of milliseconds would otherwise
 * decide the mean of a function that takes nanoseconds. Time a call spends
 * blocked (sleeping, waiting for I/O) is its own and stays in. Nor does
 * the clock count what the probes of traced callees cost (their calibrated
 * cost per call, added at each of their exits): a function that calls a
 * traced function 10 times is judged on its own time, not on the 10
 * probe round trips tracing added to it. */
struct frame {
	__u32 id;
	__u32 pad;
	__u64 ts; /* entry time minus preempted_ns then */
};
struct call_stack {
	__u32 depth;
	__u32 pad;
	__u64 preempted_ns; /* total time preempted while it had this storage */
	__u64 preempted_at; /* when it was last preempted; 0: running or blocked */
	__u64 probe_ns;	    /* total probe cost of the calls it returned from */
	struct frame frames[ATRACE_FILTER_STACK];
};
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct call_stack);
} call_stacks SEC(".maps");

static __always_inline void emit_hdr(__u64 ts, __u64 pid_tgid, __u32 id, __u16 kind, __u64 flags)
{
	struct atrace_rec_hdr *r;
	__u32 cpu;

	r = reserve(&cpu, sizeof(*r), kind);
	if (!r)
		return;
	fill_hdr(r, ts, pid_tgid >> 32, (__u32)pid_tgid, id, cpu, kind);
	bpf_ringbuf_submit(r, flags);
}

/* The recorder sleeps on a timer; a function that a program just turned
 * off wakes it at once (a forced wake-up costs ~8.5 us, paid once per
 * function), so its probes go within milliseconds. */
static __always_inline void hint(__u64 pid_tgid, __u32 id, struct atrace_fn_state *st)
{
	if (__sync_fetch_and_add(&st->hinted, 1) == 0)
		emit_hdr(bpf_ktime_get_ns(), pid_tgid, id, ATRACE_REC_FILTER_HINT, BPF_RB_FORCE_WAKEUP);
}

static __always_inline int func_entry_filtered(__u64 cookie, struct atrace_fn_state *st,
					       __u64 ts, __u64 pid_tgid)
{
	__u32 id = (__u32)cookie;
	struct atrace_fn_stat *stat;
	struct call_stack *cs;

	if (st->gen != (__u32)(cookie >> 32) || st->off)
		return 0;
	if (filter_max_calls) {
		__u64 n = __sync_fetch_and_add(&st->calls, 1);

		if (n >= filter_max_calls && !st->keep) {
			st->off = ATRACE_OFF_MAX_CALLS; /* the recorder detaches it */
			hint(pid_tgid, id, st);
			return 0;
		}
	}
	cs = bpf_task_storage_get(&call_stacks, bpf_get_current_task_btf(), 0,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (cs) {
		__u32 d = cs->depth;

		if (d < ATRACE_FILTER_STACK) {
			cs->frames[d].id = id;
			cs->frames[d].ts = ts - cs->preempted_ns - cs->probe_ns;
		}
		cs->depth = d + 1;
	}
	stat = bpf_map_lookup_elem(&fn_stat, &id);
	if (stat)
		stat->open++;
	emit_hdr(ts, pid_tgid, id, ATRACE_REC_FUNC_ENTRY, BPF_RB_NO_WAKEUP);
	return 0;
}

/* An exit is recorded when its entry was: a function being detached still
 * closes the calls it had in flight, and never shows an exit without its
 * entry. */
static __always_inline int func_exit_filtered(__u64 cookie, struct atrace_fn_state *st,
					       __u64 ts, __u64 pid_tgid)
{
	__u32 id = (__u32)cookie;
	struct atrace_fn_stat *stat;
	struct call_stack *cs;
	__u64 entry_ts = 0;
	bool matched = false;

	if (st->gen != (__u32)(cookie >> 32))
		return 0;
	cs = bpf_task_storage_get(&call_stacks, bpf_get_current_task_btf(), 0, 0);
	if (cs && cs->depth > 0) {
		__u32 d = cs->depth - 1;

		if (d < ATRACE_FILTER_STACK) {
			if (cs->frames[d].id == id) {
				matched = true;
				entry_ts = cs->frames[d].ts + cs->preempted_ns + cs->probe_ns;
				cs->depth = d;
			}
		} else {
			matched = true; /* too deep to check: trust the nesting */
			cs->depth = d;
		}
		if (matched)
			cs->probe_ns += st->cost_ns;
	}
	/* No entry of ours (the call began before recording, or while off). */
	if (!matched)
		return st->off ? 0 : (emit_hdr(ts, pid_tgid, id, ATRACE_REC_FUNC_EXIT,
					       BPF_RB_NO_WAKEUP), 0);
	stat = bpf_map_lookup_elem(&fn_stat, &id);
	if (stat) {
		stat->open--;
		if (entry_ts) {
			stat->calls++;
			stat->sum_ns += ts - entry_ts;
			/* A candidate on this CPU's numbers alone: the recorder
			 * decides on all CPUs'. */
			if (st->limit_ns && stat->calls >= filter_min_calls &&
			    stat->sum_ns < st->limit_ns * stat->calls && !st->hinted &&
			    !st->keep) {
				/* Off at once: the recorder detaches it when it wakes. */
				st->off = ATRACE_OFF_THRESHOLD;
				hint(pid_tgid, id, st);
			}
		}
	}
	emit_hdr(ts, pid_tgid, id, ATRACE_REC_FUNC_EXIT, BPF_RB_NO_WAKEUP);
	return 0;
}

/* Calls a thread started after the stop that have not returned yet: their
 * entries were not recorded, so neither are their exits. Calls nest on a
 * thread, so an exit while this is 0 ends a call that began before the
 * stop (or before the recording: an exit without entry, as at any time). */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u32);
} calls_after_stop SEC(".maps");

/* Whether a function event is recorded once `stopping` is set. */
static __always_inline bool stop_gate(__u16 kind)
{
	__u32 *n = bpf_task_storage_get(&calls_after_stop, bpf_get_current_task_btf(), 0,
					BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (kind == ATRACE_REC_FUNC_ENTRY) {
		if (n)
			*n += 1;
		return false;
	}
	if (n && *n) {
		*n -= 1;
		return false;
	}
	return true;
}

static __always_inline int emit_func(void *ctx, __u16 kind)
{
	__u64 ts = bpf_ktime_get_ns();
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct atrace_rec_hdr *r;
	__u32 cpu;

	/* Constant folded at load: the lookup exists only for --follow-forks. */
	if (filter_functions && !traced(pid_tgid >> 32))
		return 0;
	if (before_exec || (stopping && !stop_gate(kind)))
		return 0;
	if (filtering) {
		__u64 cookie = bpf_get_attach_cookie(ctx);
		__u32 id = (__u32)cookie;
		struct atrace_fn_state *st = bpf_map_lookup_elem(&fn_state, &id);

		/* Ids beyond the table (atrace's own calibration probes) are
		 * recorded as without filters. */
		if (st)
			return kind == ATRACE_REC_FUNC_ENTRY
				       ? func_entry_filtered(cookie, st, ts, pid_tgid)
				       : func_exit_filtered(cookie, st, ts, pid_tgid);
	}
	r = reserve(&cpu, sizeof(*r), kind);
	if (!r)
		return 0;
	fill_hdr(r, ts, pid_tgid >> 32, (__u32)pid_tgid, (__u32)bpf_get_attach_cookie(ctx), cpu,
		 kind);
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

/* ---- USDT probes -------------------------------------------------------- */

static __always_inline void usdt_args(struct pt_regs *ctx, struct atrace_rec_usdt *r, int n)
{
	long v;
	int i;

#pragma unroll
	for (i = 0; i < ATRACE_USDT_MAX_ARGS; i++) {
		v = 0;
		if (i < n)
			bpf_usdt_arg(ctx, i, &v);
		r->args[i] = v;
	}
}

/* The probe's argument count, at most the ATRACE_USDT_MAX_ARGS recorded. */
static __always_inline int usdt_nargs(struct pt_regs *ctx)
{
	int n = bpf_usdt_arg_cnt(ctx);

	return n < 0 ? 0 : n > ATRACE_USDT_MAX_ARGS ? ATRACE_USDT_MAX_ARGS : n;
}

/* An event without string arguments; integers come from the registers and
 * stack slots the note names. An interval's begin and end are a function
 * entry and exit of the interval's id. */
SEC("usdt")
int usdt_hit(struct pt_regs *ctx)
{
	__u64 ts = bpf_ktime_get_ns();
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u64 cookie = bpf_usdt_cookie(ctx);
	__u32 id = (__u32)cookie, role = (cookie >> 32) & 0xff;
	struct atrace_rec_usdt *r;
	__u32 cpu;
	int n;

	if (filter_functions && !traced(pid_tgid >> 32))
		return 0;
	/* Intervals do not nest: at the stop, open ones stay unfinished. */
	if (before_exec || stopping)
		return 0;
	if (role == ATRACE_USDT_BEGIN || role == ATRACE_USDT_END) {
		emit_hdr(ts, pid_tgid, id,
			 role == ATRACE_USDT_BEGIN ? ATRACE_REC_FUNC_ENTRY : ATRACE_REC_FUNC_EXIT,
			 BPF_RB_NO_WAKEUP);
		return 0;
	}
	n = usdt_nargs(ctx);
	r = reserve(&cpu, sizeof(*r), ATRACE_REC_USDT);
	if (!r)
		return 0;
	fill_hdr(&r->hdr, ts, pid_tgid >> 32, (__u32)pid_tgid, id, cpu, ATRACE_REC_USDT);
	r->nargs = n;
	r->str_mask = 0;
	usdt_args(ctx, r, n);
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	return 0;
}

/* Copies a NUL-terminated string from the process, faulting its page in if
 * need be (Linux 6.12+): string literals a program passes but never reads
 * itself sit on pages not yet mapped, which bpf_probe_read_user_str()
 * cannot read. Needs a sleepable program. Weak: a kernel without it still
 * loads everything else (usdt_hit_str is then not loaded). */
extern int bpf_copy_from_user_str(void *dst, __u32 dst__sz, const void *unsafe_ptr__ign,
				  __u64 flags) __ksym __weak;

/* An event with string arguments (the spec's `str`). `can_fault`: copy
 * with bpf_copy_from_user_str() (sleepable program), else with
 * bpf_probe_read_user_str(), which fails on a page not yet mapped in: the
 * string is then recorded empty. */
static __always_inline int usdt_str_event(struct pt_regs *ctx, bool can_fault)
{
	__u64 ts = bpf_ktime_get_ns();
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u64 cookie = bpf_usdt_cookie(ctx);
	__u32 id = (__u32)cookie, mask = (cookie >> 40) & 0x3f;
	struct atrace_rec_usdt_str *rs;
	const void *src;
	__u32 cpu;
	int n, i, slot = 0;
	long got;

	if (filter_functions && !traced(pid_tgid >> 32))
		return 0;
	if (before_exec || stopping)
		return 0;
	n = usdt_nargs(ctx);
	rs = reserve(&cpu, sizeof(*rs), ATRACE_REC_USDT);
	if (!rs)
		return 0;
	fill_hdr(&rs->u.hdr, ts, pid_tgid >> 32, (__u32)pid_tgid, id, cpu, ATRACE_REC_USDT);
	rs->u.nargs = n;
	usdt_args(ctx, &rs->u, n);
	rs->u.str_mask = 0;
#pragma unroll
	for (i = 0; i < ATRACE_USDT_MAX_ARGS; i++) {
		if (!(mask & (1u << i)) || i >= n || slot >= ATRACE_USDT_MAX_STRS)
			continue;
		src = (const void *)rs->u.args[i];
		if (can_fault)
			got = bpf_copy_from_user_str(rs->str[slot & 1], ATRACE_USDT_STR_LEN, src, 0);
		else
			got = bpf_probe_read_user_str(rs->str[slot & 1], ATRACE_USDT_STR_LEN, src);
		if (got < 0)
			rs->str[slot & 1][0] = 0;
		rs->u.str_mask |= 1u << i;
		slot++;
	}
	bpf_ringbuf_submit(rs, BPF_RB_NO_WAKEUP);
	return 0;
}

/* Sleepable, so the copy may fault. (libbpf 1.1 has no "usdt.s" section; a
 * sleepable uprobe program is the same program type, and libbpf's USDT
 * attach takes it.) */
SEC("uprobe.s")
int usdt_hit_str(struct pt_regs *ctx)
{
	return usdt_str_event(ctx, true);
}

SEC("uprobe")
int usdt_hit_str_nofault(struct pt_regs *ctx)
{
	return usdt_str_event(ctx, false);
}

/* ---- kernel events ------------------------------------------------------ */

/* A kernel event of thread `tid` of process `tgid`: the thread the event is
 * about, which is not always the current one (wake-ups, switch-in). */
static __always_inline void emit_args(__u64 ts, __u32 tgid, __u32 tid, __u16 kind, __u32 flags,
				      __u64 arg0, __u64 arg1)
{
	struct atrace_rec_args *r;
	__u32 cpu;

	r = reserve(&cpu, sizeof(*r), kind);
	if (!r)
		return;
	fill_hdr(&r->hdr, ts, tgid, tid, flags, cpu, kind);
	r->arg0 = arg0;
	r->arg1 = arg1;
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
}

static __always_inline void emit_comm(__u64 ts, __u32 tgid, __u32 tid, __u16 kind,
				      const char *comm)
{
	struct atrace_rec_comm *r;
	__u32 cpu;

	r = reserve(&cpu, sizeof(*r), kind);
	if (!r)
		return;
	fill_hdr(&r->hdr, ts, tgid, tid, 0, cpu, kind);
	bpf_probe_read_kernel_str(r->comm, sizeof(r->comm), comm);
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
}

/* The previous state as the file stores it: 0 when the thread still wanted
 * the CPU (preempted, or yielded), else the state's low byte, with states
 * that have no bit there (e.g. TASK_RTLOCK_WAIT) read as uninterruptible. */
static __always_inline __u32 switch_state(bool preempt, unsigned int prev_state)
{
	if (preempt || prev_state == 0)
		return 0;
	return (prev_state & 0xff) ? (prev_state & 0xff) : 2;
}

/* The filters' clock (struct call_stack): a thread with calls being timed
 * that is preempted, then runs again. */
static __always_inline void preempted(struct task_struct *t, __u64 ts)
{
	struct call_stack *cs = bpf_task_storage_get(&call_stacks, t, 0, 0);

	if (cs)
		cs->preempted_at = ts;
}

static __always_inline void resumed(struct task_struct *t, __u64 ts)
{
	struct call_stack *cs = bpf_task_storage_get(&call_stacks, t, 0, 0);

	if (cs && cs->preempted_at) {
		if (ts > cs->preempted_at)
			cs->preempted_ns += ts - cs->preempted_at;
		cs->preempted_at = 0;
	}
}

static __always_inline int on_switch(bool preempt, struct task_struct *prev,
				     struct task_struct *next, unsigned int prev_state)
{
	__u32 prev_tgid = prev->tgid, next_tgid = next->tgid;
	__u64 ts = 0;

	/* Two separate tests: clang would otherwise OR the two lookups'
	 * pointers, which the verifier refuses. Both records share one time. */
	if (traced(prev_tgid)) {
		__u32 state = switch_state(preempt, prev_state);

		ts = bpf_ktime_get_ns();
		emit_args(ts, prev_tgid, prev->pid, ATRACE_REC_SWITCH_OUT, state, next->pid, 0);
		if (filtering && state == 0)
			preempted(prev, ts);
	}
	if (traced(next_tgid)) {
		if (!ts)
			ts = bpf_ktime_get_ns();
		emit_args(ts, next_tgid, next->pid, ATRACE_REC_SWITCH_IN, 0, prev->pid, 0);
		if (filtering)
			resumed(next, ts);
	}
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	return on_switch(preempt, prev, next, prev_state);
}

/* Before 5.18 the tracepoint had no prev_state: the task's state field
 * (__state since 5.14) is the same value. */
SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch_nostate, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	return on_switch(preempt, prev, next, BPF_CORE_READ(prev, __state));
}

/* The waker is the current task: in interrupt context that is whichever
 * task the interrupt landed on (0 when it landed on the idle task). */
static __always_inline int wakeup(struct task_struct *p)
{
	__u32 tgid = p->tgid;

	if (!traced(tgid))
		return 0;
	emit_args(bpf_ktime_get_ns(), tgid, p->pid, ATRACE_REC_WAKEUP, 0,
		  (__u32)bpf_get_current_pid_tgid(), p->thread_info.cpu);
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(sched_wakeup, struct task_struct *p)
{
	return wakeup(p);
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(sched_wakeup_new, struct task_struct *p)
{
	return wakeup(p);
}

SEC("tp_btf/sched_migrate_task")
int BPF_PROG(sched_migrate, struct task_struct *p, int dest_cpu)
{
	__u32 tgid = p->tgid;

	if (!traced(tgid))
		return 0;
	emit_args(bpf_ktime_get_ns(), tgid, p->pid, ATRACE_REC_MIGRATE, 0, p->thread_info.cpu,
		  (__u32)dest_cpu);
	return 0;
}

/*
 * System calls. Two x86-64 system calls are the uprobe machinery itself:
 * uretprobe (335, 6.11+) is how every traced function returns, uprobe (336,
 * 6.18) how a NOP5 entry probe fires (nr_uretprobe, nr_uprobe: set only
 * where the kernel has them, so that nothing else is ever skipped).
 * Recording them would add a fake system call to every traced call, so they
 * are skipped, entry and exit, as cheaply as possible: every traced call
 * pays for it (docs/BENCHMARKS.md, "Kernel groups"). Their entry is told by
 * its number, first thing. Their exit, like rt_sigreturn's, reports
 * orig_ax = -1: rt_sigreturn's entry leaves its number in task storage,
 * which names that exit; an exit with orig_ax = -1 and no number left is
 * one of theirs. No other system call touches the storage.
 */
#define NR_RT_SIGRETURN 15

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64); /* nr + 1 of an rt_sigreturn in progress; 0: none */
} in_syscall SEC(".maps");

SEC("tp_btf/sys_enter")
int BPF_PROG(sys_enter, struct pt_regs *regs, long id)
{
	__u64 pid_tgid;
	__u64 *cur;

	if (id == nr_uretprobe || id == nr_uprobe)
		return 0;
	pid_tgid = bpf_get_current_pid_tgid();
	if (!traced(pid_tgid >> 32))
		return 0;
	if (id == NR_RT_SIGRETURN) {
		cur = bpf_task_storage_get(&in_syscall, bpf_get_current_task_btf(), 0,
					   BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (cur)
			*cur = (__u64)id + 1;
	}
	emit_args(bpf_ktime_get_ns(), pid_tgid >> 32, (__u32)pid_tgid, ATRACE_REC_SYS_ENTER, 0,
		  (__u64)id, 0);
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(sys_exit, struct pt_regs *regs, long ret)
{
	__u64 nr = BPF_CORE_READ(regs, orig_ax);
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u64 *cur;

	if ((__s64)nr < 0) {
		cur = bpf_task_storage_get(&in_syscall, bpf_get_current_task_btf(), 0, 0);
		if (!cur || !*cur)
			return 0; /* uretprobe or uprobe */
		nr = *cur - 1;
		*cur = 0;
	}
	if (!traced(pid_tgid >> 32))
		return 0;
	emit_args(bpf_ktime_get_ns(), pid_tgid >> 32, (__u32)pid_tgid, ATRACE_REC_SYS_EXIT, 0, nr,
		  (__u64)ret);
	return 0;
}

/* x86 page-fault error code bits (arch/x86/include/asm/trap_pf.h). */
#define X86_PF_WRITE 0x2
#define X86_PF_USER 0x4

/* Fires before the fault is handled, so whether it was major (needed I/O)
 * is not known here: the major flag stays 0. */
SEC("tp_btf/page_fault_user")
int BPF_PROG(page_fault_user, unsigned long address, struct pt_regs *regs,
	     unsigned long error_code)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 flags = 0;

	if (!traced(pid_tgid >> 32))
		return 0;
	if (error_code & X86_PF_WRITE)
		flags |= 1;
	if (error_code & X86_PF_USER)
		flags |= 2;
	emit_args(bpf_ktime_get_ns(), pid_tgid >> 32, (__u32)pid_tgid, ATRACE_REC_FAULT, flags,
		  address, BPF_CORE_READ(regs, ip));
	return 0;
}

/* Loaded for the proc group and for --follow-forks (which needs the map
 * updated even when no proc records are wanted). */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(sched_process_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 parent_tgid = parent->tgid, child_tgid = child->tgid;
	bool thread = child_tgid == parent_tgid;
	__u8 one = 1;
	__u64 ts;

	if (!traced(parent_tgid))
		return 0;
	if (!thread && follow_forks)
		bpf_map_update_elem(&traced_tgids, &child_tgid, &one, BPF_ANY);
	if (!want_proc)
		return 0;
	ts = bpf_ktime_get_ns();
	emit_args(ts, parent_tgid, (__u32)bpf_get_current_pid_tgid(), ATRACE_REC_FORK,
		  thread ? 1 : 0, child_tgid, child->pid);
	/* The new task's name, in its own stream: it starts with it. */
	if (thread || follow_forks)
		emit_comm(ts, child_tgid, child->pid, ATRACE_REC_COMM, child->comm);
	return 0;
}

/* Loaded for the proc group and for launched targets (before_exec). */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(sched_process_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = p->tgid;
	struct atrace_rec_exec *r;
	__u64 ts;
	__u32 cpu;

	/* The launched target's own life starts here. */
	if (before_exec) {
		if (!bpf_map_lookup_elem(&traced_tgids, &tgid))
			return 0;
		before_exec = false;
	}
	if (!want_proc || !traced(tgid))
		return 0;
	ts = bpf_ktime_get_ns();
	r = reserve(&cpu, sizeof(*r), ATRACE_REC_EXEC);
	if (r) {
		fill_hdr(&r->hdr, ts, tgid, p->pid, 0, cpu, ATRACE_REC_EXEC);
		bpf_probe_read_kernel_str(r->filename, sizeof(r->filename), BPF_CORE_READ(bprm, filename));
		bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	}
	/* The new name was recorded already: exec renames through task_rename. */
	return 0;
}

SEC("tp_btf/task_rename")
int BPF_PROG(task_rename, struct task_struct *task, const char *comm)
{
	__u32 tgid = task->tgid;

	if (!traced(tgid))
		return 0;
	emit_comm(bpf_ktime_get_ns(), tgid, task->pid, ATRACE_REC_COMM, comm);
	return 0;
}

/* Always loaded (one of the two): a thread's exit closes its open calls,
 * and its name at that moment is the one a short-lived thread is
 * remembered by. */
static __always_inline int on_thread_exit(struct task_struct *p, bool group_dead)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32;
	__u64 ts;

	if (!traced(tgid))
		return 0;
	ts = bpf_ktime_get_ns();
	emit_comm(ts, tgid, (__u32)pid_tgid, ATRACE_REC_THREAD_EXIT, p->comm);
	if (group_dead) {
		if (want_proc)
			emit_args(ts, tgid, (__u32)pid_tgid, ATRACE_REC_PROC_EXIT, 0,
				  (__u64)(__s64)p->exit_code, 0);
		/* A followed child is done; the recorder stops when the map is empty. */
		if (follow_forks)
			bpf_map_delete_elem(&traced_tgids, &tgid);
	}
	return 0;
}

/* Kernels whose tracepoint passes group_dead (in 6.18, not in 6.12). */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(thread_exit, struct task_struct *p, bool group_dead)
{
	return on_thread_exit(p, group_dead);
}

/* Older kernels: do_exit() has already counted the thread out of
 * signal->live when the tracepoint fires, so the last thread sees 0. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(thread_exit_nogroup, struct task_struct *p)
{
	return on_thread_exit(p, BPF_CORE_READ(p, signal, live.counter) == 0);
}
