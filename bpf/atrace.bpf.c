// SPDX-License-Identifier: GPL-2.0
/*
 * atrace's BPF programs. They only stamp and hand over records: every
 * decision (what to probe, how to order, what to keep) is in user space.
 *
 *   rings          one ring buffer per CPU (array of ringbufs): no shared lock
 *   lane_*         one lane of fixed slots per CPU for the plain function
 *                  entries and exits: cheaper than a ring (lanes.bpf.h)
 *   lost           per-CPU, per-kind count of records that found no room
 *   thread_lost    per thread, losses its next record's GAP record tells
 *   traced_tgids   processes whose kernel events are recorded
 *   func_entry     uprobe on a function's entry: cookie = function id
 *   func_exit      uretprobe of the same function
 *   func_*_values  the same with the function's arguments / return value
 *                  (record --args/--retval: atrace_values.bpf.h)
 *   func_entry_stack  the same with the user call stack (record --stack:
 *                  atrace_stack.bpf.h)
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
 *     sched        sched_switch, sched_waking, sched_wakeup(_new), sched_migrate_task
 *     syscalls     sys_enter, sys_exit
 *     faults       page_fault_user
 *     proc         sched_process_fork, sched_process_exec, task_rename
 *   net_sys_*      sys_enter, sys_exit: the messages read, written, sent and
 *                  received on TCP, UDP, unix sockets and pipes: the net
 *                  group, off by default (atrace_net.bpf.h)
 *   module_hook    uprobe on a probed module's DT_INIT / DT_FINI: it was
 *                  loaded / is being unloaded (atrace_module.bpf.h)
 *
 * All tracepoint programs are tp_btf: typed arguments, no tracefs needed,
 * and this kernel has no kprobes.
 *
 * Kernels differ: where a tracepoint's signature or a kfunc changed, each
 * variant is its own program and the recorder loads the one the running
 * kernel has (record/bpf_variants.cpp decides from the kernel's BTF);
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
#include <bpf/bpf_endian.h>

#include <bpf/usdt.bpf.h>

#include "bpf/atrace.h"
#include "bpf/unwind.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by the recorder before load. */
const volatile bool filter_functions = false; /* probes attached system-wide (--follow-forks) */
/* Relevance filters: off, the programs are exactly as without filters. */
const volatile bool filtering = false;
const volatile __u64 filter_max_calls = 0;     /* 0: no max-calls rule */
const volatile __u64 filter_min_calls = 0;     /* hint: calls on one CPU before judging */
/* Calls on one CPU before a mean far below the bar (early_limit_ns) is
 * judged: record/filter_policy.h, the early rule. */
const volatile __u64 filter_early_calls = 0;
const volatile bool follow_forks = false;     /* children of traced processes join the map */
const volatile bool want_proc = false;        /* the proc group: fork/exec/exit/comm records */
const volatile bool thread_forks = false;     /* thread forks whatever the groups (the fast path) */
/* Several traced processes (-p A,B, --cgroup, --follow-forks): one leaves
 * the map when it exits, and the recorder stops when none is left. */
const volatile bool forget_exited = false;
/* --cgroup: a process that execs in this cgroup v2 (its id, at this depth
 * below the root) or one of its descendants joins the map. 0: none. */
const volatile __u64 cgroup_id = 0;
const volatile __u32 cgroup_level = 0;
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

#include "bpf/reserve.bpf.h"
#include "bpf/lanes.bpf.h"

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
	__u64 sp; /* the stack pointer at the entry: the return address's slot */
};
/* One hit of a probe runs the program of every link on it, the newest
 * link's first (the kernel puts a new consumer at the head of the uprobe's
 * list, 6.1 to 6.18). While a group is rebuilt (record/detacher.h) a kept
 * function has two links, and a link can be closed, or another added, in
 * the middle of a hit (a hit is not atomic: the thread can be preempted
 * between two programs). So no program may count on another one running
 * after it: the first program of a hit records it, whatever its link's
 * generation, and leaves a mark; a program whose link is older than the
 * mark's (it runs after the newer one on the same hit: generations only
 * grow, and the programs of one hit run newest first) skips the hit. Any
 * other hit of the thread overwrites the mark, and the first program of a
 * new hit always belongs to the newest link attached, never older than a
 * mark left before, so a mark cannot silence another hit. */
struct hit_mark {
	__u32 id;
	__u16 kind;
	__u16 set;
	__u64 sp;
	__u32 gen; /* the generation of the link that recorded the hit */
	__u32 pad;
};
struct call_stack {
	__u32 depth;
	__u32 pad;
	__u64 preempted_ns; /* total time preempted while it had this storage */
	__u64 preempted_at; /* when it was last preempted; 0: running or blocked */
	__u64 probe_ns;	    /* total probe cost of the calls it returned from */
	struct hit_mark mark;
	struct frame frames[ATRACE_FILTER_STACK];
};
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct call_stack);
} call_stacks SEC(".maps");

/* Whether the record was written (its ring had room). */
static __always_inline bool emit_hdr(__u64 ts, __u64 pid_tgid, __u32 id, __u16 kind, __u64 flags)
{
	struct atrace_rec_hdr *r;
	__u32 cpu;

	r = reserve(&cpu, sizeof(*r), kind, ts, pid_tgid >> 32, (__u32)pid_tgid);
	if (!r)
		return false;
	fill_hdr(r, ts, pid_tgid >> 32, (__u32)pid_tgid, id, cpu, kind);
	bpf_ringbuf_submit(r, flags);
	return true;
}

/* A function's entry or exit record: through this CPU's lane when `lane`
 * (a constant at each call) and there are lanes, else through its ring.
 * The programs that write a values or stack record after the entry or
 * exit keep both in the ring: the recorder joins the second to the first,
 * which must be drained before it (record/func_values.h). */
static __always_inline bool emit_call(bool lane, __u64 ts, __u64 pid_tgid, __u32 id, __u16 kind)
{
	if (lane && lane_slots)
		return lane_emit(ts, pid_tgid, id, kind);
	return emit_hdr(ts, pid_tgid, id, kind, BPF_RB_NO_WAKEUP);
}

/* The recorder sleeps on a timer; a function that a program just turned
 * off wakes it at once (a forced wake-up costs ~8.5 us, paid once per
 * function), so its probes go within milliseconds. */
static __always_inline void hint(__u64 pid_tgid, __u32 id, struct atrace_fn_state *st)
{
	if (__sync_fetch_and_add(&st->hinted, 1) == 0)
		emit_hdr(bpf_ktime_get_ns(), pid_tgid, id, ATRACE_REC_FILTER_HINT, BPF_RB_FORCE_WAKEUP);
}

/* Whether this link's program records the hit (struct hit_mark). */
static __always_inline bool link_current(struct call_stack *cs, __u64 cookie,
					 struct atrace_fn_state *st, __u16 kind, __u64 sp)
{
	__u32 id = (__u32)cookie, mine = (__u32)(cookie >> 32);

	if (!cs) /* no storage for the mark: the generation switch decides */
		return mine == st->gen;
	if (cs->mark.set && cs->mark.id == id && cs->mark.kind == kind && cs->mark.sp == sp &&
	    (__s32)(mine - cs->mark.gen) < 0)
		return false; /* an older link of a hit already recorded */
	cs->mark.id = id;
	cs->mark.kind = kind;
	cs->mark.sp = sp;
	cs->mark.gen = mine;
	cs->mark.set = 1;
	return true;
}

/* Frames whose slot is below `above` were left without their return (a
 * longjmp): the thread is above them. They are dropped (a few at a hit;
 * the next hits drop the rest), so that the calls below them are still
 * timed and their exits still match. */
static __always_inline void drop_left_frames(struct call_stack *cs, __u64 above)
{
	struct atrace_fn_stat *stat;
	int i;

	for (i = 0; i < 8; i++) {
		__u32 d = cs->depth, id;

		if (d == 0 || d > ATRACE_FILTER_STACK)
			break;
		d--;
		barrier_var(d);
		if (d >= ATRACE_FILTER_STACK || cs->frames[d].sp >= above)
			break;
		id = cs->frames[d].id;
		stat = bpf_map_lookup_elem(&fn_stat, &id);
		if (stat)
			stat->open--;
		cs->depth = d;
	}
}

/* Whether the entry is recorded (emit_func writes it). An `untimed` call
 * (no return probe) is not pushed: no exit would pop it. */
static __always_inline bool func_entry_filtered(__u64 cookie, struct atrace_fn_state *st, __u64 ts,
						__u64 pid_tgid, __u64 sp, bool untimed)
{
	__u32 id = (__u32)cookie;
	struct atrace_fn_stat *stat;
	struct call_stack *cs;

	cs = bpf_task_storage_get(&call_stacks, bpf_get_current_task_btf(), 0,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!link_current(cs, cookie, st, ATRACE_REC_FUNC_ENTRY, sp) || st->off)
		return false;
	if (filter_max_calls) {
		__u64 n = __sync_fetch_and_add(&st->calls, 1);

		if (n >= filter_max_calls && !st->keep) {
			st->off = ATRACE_OFF_MAX_CALLS; /* the recorder detaches it */
			hint(pid_tgid, id, st);
			return false;
		}
	}
	if (untimed)
		return true;
	if (cs) {
		__u32 d;

		drop_left_frames(cs, sp); /* at the same slot: maybe a tail call, kept */
		d = cs->depth;

		if (d < ATRACE_FILTER_STACK) {
			cs->frames[d].id = id;
			cs->frames[d].ts = ts - cs->preempted_ns - cs->probe_ns;
			cs->frames[d].sp = sp;
		}
		cs->depth = d + 1;
	}
	stat = bpf_map_lookup_elem(&fn_stat, &id);
	if (stat)
		stat->open++;
	return true;
}

/* An exit is recorded when its entry was: a function being detached still
 * closes the calls it had in flight, and never shows an exit without its
 * entry. Whether it is recorded (emit_func writes it). */
static __always_inline bool func_exit_filtered(__u64 cookie, struct atrace_fn_state *st, __u64 ts,
					       __u64 pid_tgid, __u64 sp)
{
	__u32 id = (__u32)cookie;
	struct atrace_fn_stat *stat;
	struct call_stack *cs;
	__u64 entry_ts = 0;
	bool matched = false;

	cs = bpf_task_storage_get(&call_stacks, bpf_get_current_task_btf(), 0,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!link_current(cs, cookie, st, ATRACE_REC_FUNC_EXIT, sp))
		return false;
	if (cs)
		drop_left_frames(cs, sp - 8);
	if (cs && cs->depth > 0) {
		__u32 d = cs->depth - 1;

		if (d < ATRACE_FILTER_STACK) {
			/* At the exit the return address is popped: sp is the
			 * entry's + 8. A lower one is the exit of a deeper call
			 * of the same function whose entry was not recorded (a
			 * recursion that went on while the function was off):
			 * it must not close the recorded call around it. */
			if (cs->frames[d].id == id && sp >= cs->frames[d].sp + 8) {
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
		return !st->off;
	stat = bpf_map_lookup_elem(&fn_stat, &id);
	if (stat) {
		stat->open--;
		if (entry_ts) {
			stat->calls++;
			/* The callees' calibrated probe cost, left out of the
			 * clock, can exceed what a short call really spent on
			 * them: its own time is then 0, not a negative that
			 * would wrap the sum. */
			stat->sum_ns += ts > entry_ts ? ts - entry_ts : 0;
			/* A candidate on this CPU's numbers alone: the recorder
			 * decides on all CPUs'. */
			if (st->limit_ns && stat->calls >= filter_early_calls &&
			    !st->hinted && !st->keep &&
			    (stat->sum_ns < st->early_limit_ns * stat->calls ||
			     (stat->calls >= filter_min_calls &&
			      stat->sum_ns < st->limit_ns * stat->calls))) {
				/* Off at once: the recorder detaches it when it wakes. */
				st->off = ATRACE_OFF_THRESHOLD;
				hint(pid_tgid, id, st);
			}
		}
	}
	return true;
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

/* What a function probe's hit computes once: its values record, when it
 * has one, is stamped and keyed with the same (bpf/atrace_values.bpf.h). */
struct func_hit {
	__u64 ts;
	__u64 pid_tgid;
	__u64 cookie; /* function id, and in the upper half its link's generation */
};

/* ---- which recorded calls the thread has left --------------------------- */

/* Each thread's recorded calls that have not ended, by the slot of their
 * return address (the stack pointer at the entry), for two things the
 * kernel's return probes cannot tell (docs/safety.md):
 * - a call past the kernel's 64 nested return probes of a thread
 *   (MAX_URETPROBE_DEPTH) gets no return probe: its exit never fires;
 * - a call left by longjmp/siglongjmp (or an exception's catch) has its
 *   return instance dropped by the kernel: its exit never fires either.
 * The kernel's own rule says when such a call is gone: the thread is seen
 * at or above its slot (an entry with sp >= slot, an exit with sp > slot +
 * 8: the return popped the address). Each one gone is an UNWIND record
 * (how: ATRACE_UNWIND_ABANDONED or _NESTING_LIMIT) naming the call by its
 * entry's time, written before the event that showed it, so the replay
 * closes it there and pairs the exit with its own entry. Frames deeper
 * than ATRACE_SP_STACK are counted, not compared: the replay's own rule
 * (an exit closes what is above its entry) covers them. */
struct sp_frame {
	__u64 sp;
	__u64 ts; /* the entry record's time: the call's name for the replay */
	__u32 id;
	__u32 untimed; /* the kernel gave it no return probe */
};
struct sp_stack {
	__u32 depth;
	__u32 pad;
	struct sp_frame f[ATRACE_SP_STACK];
};
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sp_stack);
} sp_stacks SEC(".maps");

#define ATRACE_MAX_URETPROBE_DEPTH 64 /* the kernel's MAX_URETPROBE_DEPTH, 3.x to 6.18 */

/* Whether the kernel will give this entry no return probe: it checks
 * utask->depth (the thread's pending return instances) right after the
 * entry handlers run (prepare_uretprobe), so the value read now is the one
 * it will check. No utask yet: the thread's first uprobe, depth 0. */
static __always_inline bool past_nesting_limit(void)
{
	/* Direct loads of BTF pointers (the verifier guards them), not
	 * bpf_probe_read_kernel(): this runs at every entry. */
	struct uprobe_task *ut = bpf_get_current_task_btf()->utask;

	return ut && ut->depth >= ATRACE_MAX_URETPROBE_DEPTH;
}

/* An entry at the same slot as an open call is a tail call of it (the
 * call is still live: the kernel chains the two return instances) when
 * the return address there is the uretprobe trampoline; otherwise the
 * open call ended unseen and this is a new call in its place. */
static __always_inline bool tail_call_at(__u64 sp)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 ret = 0, tramp = BPF_CORE_READ(task, mm, uprobes_state.xol_area, vaddr);

	return tramp && bpf_probe_read_user(&ret, sizeof(ret), (void *)sp) == 0 && ret == tramp;
}

/* Whether an exception's unwind (or a forced one) is running on the thread:
 * the unwind guard holds frames it has not settled. */
static __always_inline bool exception_in_flight(void)
{
	struct atrace_unwind_state *u =
		bpf_task_storage_get(&unwind_states, bpf_get_current_task_btf(), 0, 0);

	return u && u->n > 0;
}

/* One call the thread left without its return, told to the replay. */
static __always_inline void emit_gone(struct func_hit *h, struct sp_frame *f)
{
	struct atrace_rec_unwind *r;
	__u32 cpu;

	/* 1 ns before the event that showed it: it ends before that event
	 * in the thread's stream, whichever of lane and ring is drained first. */
	r = reserve(&cpu, sizeof(*r), ATRACE_REC_UNWIND, h->ts - 1, h->pid_tgid >> 32,
		    (__u32)h->pid_tgid);
	if (!r)
		return;
	fill_hdr(&r->a.hdr, h->ts - 1, h->pid_tgid >> 32, (__u32)h->pid_tgid, f->id, cpu,
		 ATRACE_REC_UNWIND);
	r->a.arg0 = f->untimed ? ATRACE_UNWIND_NESTING_LIMIT : ATRACE_UNWIND_ABANDONED;
	r->a.arg1 = f->sp;
	r->entry_ts = f->ts;
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
}

/* Looking at the top of a thread's sp_stack for frames an event shows gone. */
struct gone_ctx {
	struct sp_stack *ss;
	struct func_hit *h;
	__u64 sp;
	__u32 id;
	bool entry;
};

/* The top frame: 0 when it was gone (told, popped: look at the next one),
 * 1 when it is live, or is the exit's own call (popped), or none is left. */
static __always_inline long gone_step(struct gone_ctx *c)
{
	struct sp_stack *ss = c->ss;
	__u32 d = ss->depth, k;
	struct sp_frame *f;

	if (d == 0 || d > ATRACE_SP_STACK)
		return 1;
	k = d - 1;
	barrier_var(k); /* the verifier must see the bound the compiler knows */
	if (k >= ATRACE_SP_STACK)
		return 1;
	f = &ss->f[k];
	if (c->entry) {
		if (f->sp > c->sp || (f->sp == c->sp && !f->untimed && tail_call_at(c->sp)))
			return 1;
	} else if (f->sp + 8 >= c->sp) {
		/* Its own return (or an exit of a call not recorded). */
		if (f->sp + 8 == c->sp && f->id == c->id)
			ss->depth = d - 1;
		return 1;
	}
	/* An exception's landing pad runs above the frames it left: the
	 * unwind guard says at the catch that they were unwound
	 * (bpf/unwind.bpf.c); they are popped after it, and the replay finds
	 * them closed. */
	if (exception_in_flight()) /* looked up only here: rare */
		return 1;
	emit_gone(c->h, f);
	ss->depth = d - 1;
	return 0;
}

static long gone_loop_step(__u64 i, void *ctx)
{
	return gone_step(ctx);
}

/* Writes a function's entry or exit after the frames it shows gone.
 * `untimed`: an entry past_nesting_limit() said gets no return probe. */
static __always_inline bool emit_frame_event(bool lane, struct func_hit *h, __u16 kind, __u64 sp,
					     bool untimed)
{
	bool entry = kind == ATRACE_REC_FUNC_ENTRY;
	/* A thread with no recorded entry has nothing to match its exits. */
	struct sp_stack *ss = bpf_task_storage_get(&sp_stacks, bpf_get_current_task_btf(), 0,
						   entry ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
	__u32 id = (__u32)h->cookie;
	struct gone_ctx c = {.ss = ss, .h = h, .sp = sp, .id = id, .entry = entry};

	if (!ss)
		return emit_call(lane, h->ts, h->pid_tgid, id, kind);
	if (ss->depth > ATRACE_SP_STACK) {
		/* Past the frames kept: if the deepest kept one is gone, so
		 * are all below it (the replay closes them); else trust the
		 * nesting. */
		struct sp_frame *f = &ss->f[ATRACE_SP_STACK - 1];

		if (entry ? f->sp < sp : f->sp + 8 < sp)
			ss->depth = ATRACE_SP_STACK;
		else if (!entry)
			ss->depth--;
	}
	/* The top frame inline (almost always the last one looked at), the
	 * rest, when it was gone, in a bpf_loop: verified once, not once per
	 * frame of an unrolled loop in every function program. */
	if (gone_step(&c) == 0)
		bpf_loop(ATRACE_SP_STACK - 1, gone_loop_step, &c, 0);
	if (entry) {
		__u32 d = ss->depth;

		barrier_var(d);
		if (d < ATRACE_SP_STACK) {
			ss->f[d].sp = sp;
			ss->f[d].ts = h->ts;
			ss->f[d].id = id;
			ss->f[d].untimed = untimed;
		}
		ss->depth = d + 1;
	}
	return emit_call(lane, h->ts, h->pid_tgid, id, kind);
}

/* Records a function's entry or exit by the rules above; whether it did.
 * `lane`: see emit_call. */
static __always_inline bool emit_func(struct pt_regs *ctx, __u16 kind, struct func_hit *h,
				      bool lane)
{
	bool untimed;

	h->ts = bpf_ktime_get_ns();
	h->pid_tgid = bpf_get_current_pid_tgid();
	h->cookie = bpf_get_attach_cookie(ctx);
	/* Constant folded at load: the lookup exists only for --follow-forks. */
	if (filter_functions && !traced(h->pid_tgid >> 32))
		return false;
	if (before_exec || (stopping && !stop_gate(kind)))
		return false;
	untimed = kind == ATRACE_REC_FUNC_ENTRY && past_nesting_limit();
	if (filtering) {
		__u32 id = (__u32)h->cookie;
		struct atrace_fn_state *st = bpf_map_lookup_elem(&fn_state, &id);

		/* Ids beyond the table (atrace's own calibration probes) are
		 * recorded as without filters. */
		if (st && !(kind == ATRACE_REC_FUNC_ENTRY
				    ? func_entry_filtered(h->cookie, st, h->ts, h->pid_tgid,
							  PT_REGS_SP(ctx), untimed)
				    : func_exit_filtered(h->cookie, st, h->ts, h->pid_tgid,
							 PT_REGS_SP(ctx))))
			return false;
	}
	return emit_frame_event(lane, h, kind, PT_REGS_SP(ctx), untimed);
}

SEC("uprobe")
int func_entry(struct pt_regs *ctx)
{
	struct func_hit h;

	emit_func(ctx, ATRACE_REC_FUNC_ENTRY, &h, true);
	return 0;
}

SEC("uretprobe")
int func_exit(struct pt_regs *ctx)
{
	struct func_hit h;

	emit_func(ctx, ATRACE_REC_FUNC_EXIT, &h, true);
	return 0;
}

/* The other programs, by job: USDT probes, then the kernel events. */
#include "bpf/atrace_usdt.bpf.h"
#include "bpf/atrace_kernel.bpf.h"
#include "bpf/atrace_module.bpf.h"
#include "bpf/atrace_values.bpf.h"
#include "bpf/atrace_stack.bpf.h"
#include "bpf/atrace_net.bpf.h"
