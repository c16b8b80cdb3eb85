// SPDX-License-Identifier: GPL-2.0
/*
 * Exception-safe return probes. A uretprobe replaces the return address of
 * the probed call on the stack with the kernel's trampoline, and keeps the
 * original in a return instance (current->utask->return_instances, newest
 * first). An unwinder (a C++ throw, pthread_cancel, pthread_exit) reads
 * those slots to find the callers; the trampoline has no unwind info, so
 * the unwinder stops there and std::terminate() is called. These programs
 * make every such slot read as the original again while an unwind runs,
 * and put the trampoline back where the frame survives it.
 *
 * The writes are the recorder's (record/unwind_guard.cpp, through
 * /proc/PID/mem): bpf_probe_write_user() is not available under kernel
 * lockdown. A program hands the slots over in a request and waits, in the
 * thread, until the recorder says they are written; the thread's stack
 * cannot change meanwhile. The programs are sleepable, and the wait reads
 * the thread's memory the way the kernel's GUP does, which yields the CPU.
 *
 *   unwind_start   uprobe on the unwinder's entry points (_Unwind_RaiseException,
 *                  _Unwind_Resume, _Unwind_Resume_or_Rethrow, _Unwind_ForcedUnwind):
 *                  every slot that holds the trampoline gets its original
 *                  address back; the frame is remembered in the thread's
 *                  unwind state
 *   unwind_walk    the same on _Unwind_Backtrace, which unwinds nothing: the
 *                  frames are remembered apart (unwind_state.walk)
 *   unwind_walk_end uprobe on each `ret` of _Unwind_Backtrace: the walk's
 *                  frames above the stack pointer get the trampoline back, so
 *                  a stack walk (glibc's backtrace()) loses no return
 *   unwind_switch  uprobe on swapcontext and setcontext: the thread leaves its
 *                  stack. Every slot of the thread that holds the trampoline
 *                  gets its original address back, and each such call of
 *                  atrace's is recorded as ended there (UNWIND, how = stack
 *                  switch): its return will not be seen. Why: the comment
 *                  above unwind_switch
 *   unwind_catch   uprobe on the catch points (__cxa_begin_catch,
 *                  _Unwind_DeleteException): remembered frames below the
 *                  catcher's stack pointer were unwound: one UNWIND record each;
 *                  the others are alive and get the trampoline back, so their
 *                  returns are seen as usual
 *   unwind_exit    sched_process_exit: a thread that ends during a forced
 *                  unwind (pthread_exit, cancellation) unwound the remembered
 *                  frames below its last stack pointer
 *   release_scan   after the recording (iter.s/task, Linux 6.18): every
 *                  thread of a traced process with an armed slot of atrace's
 *                  is held by a task work (release_cb) and its slots handed to
 *                  the recorder, so that none stays armed after atrace has
 *                  gone (why that is race-free: the comment above release_works)
 *
 * The kernel's own bookkeeping needs nothing: an unwound frame's return
 * instance stays until the kernel finds it dead, exactly as after longjmp
 * (cleanup_return_instances at the next uretprobe entry, or the `chained`
 * check of the trampoline handler), and a frame given its trampoline back
 * returns through it normally. Records go to atrace's rings (the recorder
 * shares the maps of bpf/atrace.bpf.c with this object).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "bpf/atrace.h"
#include "bpf/unwind.h"

char LICENSE[] SEC("license") = "GPL";

#include "bpf/shared_maps.h"
#include "bpf/reserve.bpf.h"

/* Requests to the recorder, and what it has served, per thread. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} requests SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} served SEC(".maps");

/* Probed function (file, offset) -> atrace's probe id; filled by the recorder. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1); /* resized to the probe count by the recorder */
	__type(key, struct atrace_unwind_key);
	__type(value, __u32);
} probe_ids SEC(".maps");

/* unwind_states, the thread's unwind state (struct atrace_unwind_state,
 * bpf/unwind.h), is one of bpf/shared_maps.h: atrace.bpf.c's function
 * programs read it to leave to these programs the calls an exception
 * unwinds. */

/* Kernels before 6.12 point a return instance at its uprobe directly; later
 * ones through a "hybrid" lease (struct hprobe). */
struct return_instance___old {
	struct uprobe *uprobe;
} __attribute__((preserve_access_index));

static __always_inline __u32 probe_id_of(struct return_instance *ri)
{
	struct atrace_unwind_key key = {};
	struct uprobe *up;
	__u32 *id;

	if (bpf_core_field_exists(ri->hprobe))
		up = BPF_CORE_READ(ri, hprobe.uprobe);
	else
		up = BPF_CORE_READ((struct return_instance___old *)ri, uprobe);
	if (!up)
		return 0;
	key.ino = BPF_CORE_READ(up, inode, i_ino);
	key.dev = BPF_CORE_READ(up, inode, i_sb, s_dev);
	key.offset = BPF_CORE_READ(up, offset);
	id = bpf_map_lookup_elem(&probe_ids, &key);
	return id ? *id : 0;
}

/* The address every armed slot holds: the first slot of the process's
 * out-of-line area (uprobe_get_trampoline_vaddr()). */
static __always_inline __u64 trampoline(struct task_struct *t)
{
	return BPF_CORE_READ(t, mm, uprobes_state.xol_area, vaddr);
}

static __always_inline __u64 read_slot(__u64 addr)
{
	__u64 v = 0;

	if (bpf_copy_from_user(&v, sizeof(v), (void *)addr))
		return 0;
	return v;
}

struct wait_ctx {
	__u32 tid;
	__u64 seq;
	__u64 probe; /* an address of the thread's stack */
	struct task_struct *task;
};

static long wait_step(__u64 i, struct wait_ctx *w)
{
	__u64 *done = bpf_map_lookup_elem(&served, &w->tid);
	__u64 v;

	if (done && *done >= w->seq)
		return 1;
	/* Reads the thread's memory through the page tables (GUP), which
	 * gives the CPU away when another task wants it: the recorder may be
	 * waiting for this very CPU. */
	bpf_copy_from_user_task(&v, sizeof(v), (void *)w->probe, w->task, 0);
	return 0;
}

/* Request numbers: global, so that a reused thread id never finds its
 * predecessor's number already served. */
__u64 next_seq = 0;

/* Sends the request and waits until the recorder served it. */
static __always_inline void submit_and_wait(struct atrace_unwind_req *req, __u64 probe)
{
	struct wait_ctx w = {};
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u64 seq = __sync_fetch_and_add(&next_seq, 1) + 1;

	req->tgid = pid_tgid >> 32;
	req->tid = (__u32)pid_tgid;
	req->seq = seq;
	w.tid = req->tid;
	w.seq = seq;
	w.probe = probe;
	w.task = bpf_get_current_task_btf();
	if (bpf_ringbuf_output(&requests, req, sizeof(*req), BPF_RB_FORCE_WAKEUP))
		return; /* no room: nothing will be written */
	bpf_loop(1 << 20, wait_step, &w, 0);
}

static __always_inline void emit_unwound(__u32 tgid, __u32 tid, struct atrace_saved_frame *f,
					 __u64 how)
{
	struct atrace_rec_args *r;
	__u64 ts = bpf_ktime_get_ns();
	__u32 cpu;

	r = reserve(&cpu, sizeof(*r), ATRACE_REC_UNWIND, ts, tgid, tid);
	if (!r)
		return;
	fill_hdr(&r->hdr, ts, tgid, tid, f->id, cpu, ATRACE_REC_UNWIND);
	r->arg0 = how;
	r->arg1 = f->stack;
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
}

/* The walk of the return instances, one per bpf_loop step (the verifier
 * then checks the body once, not 64 times). */
struct disarm_ctx {
	__u64 ri; /* struct return_instance *, the next one */
	__u64 tramp;
	__u64 last; /* slot of the previous armed instance */
	bool save;       /* remember the frames in st */
	bool only_ours;  /* atrace's own probes only (the release) */
	bool record;     /* an UNWIND record for each frame of atrace's (a stack switch) */
	__u32 tgid, tid;
	struct atrace_unwind_state *st;
	struct atrace_unwind_req *req; /* the writes, appended */
	struct task_struct *task;      /* whose stack; 0: the current thread's */
};

static long disarm_step(__u64 i, struct disarm_ctx *c)
{
	struct return_instance *ri = (struct return_instance *)c->ri;
	struct atrace_unwind_state *st = c->st;
	struct atrace_unwind_req *req = c->req;
	__u64 stack, orig, v = 0;

	if (!ri)
		return 1;
	stack = BPF_CORE_READ(ri, stack);
	orig = BPF_CORE_READ(ri, orig_ret_vaddr);
	c->ri = (__u64)BPF_CORE_READ(ri, next);
	if (c->task)
		bpf_copy_from_user_task(&v, sizeof(v), (void *)stack, c->task, 0);
	else
		v = read_slot(stack);
	/* Armed: the slot holds the trampoline. A chained instance (a tail
	 * call) shares its slot with the one before: written once, remembered
	 * for both. */
	if (orig == c->tramp || (v != c->tramp && stack != c->last))
		return 0;
	if (c->only_ours && !probe_id_of(ri))
		return 0;
	if (stack != c->last) {
		__u32 n = req->n;

		if (n < ATRACE_UNWIND_MAX) {
			req->w[n].addr = stack;
			req->w[n].expect = c->tramp;
			req->w[n].value = orig;
			req->n = n + 1;
		}
	}
	c->last = stack;
	if (c->record) {
		struct atrace_saved_frame f = {.stack = stack, .orig = orig, .id = probe_id_of(ri)};

		if (f.id)
			emit_unwound(c->tgid, c->tid, &f, ATRACE_UNWIND_STACK_SWITCH);
	}
	if (c->save && st) {
		__u32 k = st->n;

		if (k < ATRACE_UNWIND_MAX) {
			st->fr[k].stack = stack;
			st->fr[k].orig = orig;
			st->fr[k].id = probe_id_of(ri);
			st->n = k + 1;
		}
	}
	return 0;
}

enum disarm_how {
	DISARM_UNWIND,  /* an unwind starts: frames remembered until its catch */
	DISARM_WALK,    /* a walk starts: frames remembered until it returns */
	DISARM_SWITCH,  /* a stack switch: frames recorded as ended */
	DISARM_RELEASE, /* atrace goes: its own frames only */
};

/* Disarms every armed slot of the current thread (only atrace's own at the
 * release), as `how` says. */
static __always_inline void disarm(enum disarm_how how, __u64 sp)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct disarm_ctx c = {};
	__u64 pid_tgid;

	c.tramp = trampoline(t);
	c.ri = (__u64)BPF_CORE_READ(t, utask, return_instances);
	if (!c.tramp || !c.ri)
		return;
	c.st = bpf_task_storage_get(&unwind_states, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!c.st)
		return;
	c.save = how == DISARM_UNWIND || how == DISARM_WALK;
	c.only_ours = how == DISARM_RELEASE;
	if (how == DISARM_SWITCH) {
		pid_tgid = bpf_get_current_pid_tgid();
		c.tgid = pid_tgid >> 32;
		c.tid = (__u32)pid_tgid;
		c.record = bpf_map_lookup_elem(&traced_tgids, &c.tgid) != 0;
	}
	/* A walk still on record is one left without returning (longjmp out
	 * of its callback), or, rarely, the walk whose callback walks again:
	 * either way its frames are forgotten and stay disarmed (their returns
	 * unseen), which is safe; only the new walk's are re-armed, at its
	 * own return. */
	if (how == DISARM_WALK) {
		if (c.st->walk)
			c.st->n = c.st->walk - 1;
		c.st->walk = c.st->n + 1;
		c.st->walk_sp = sp;
	}
	c.req = &c.st->req;
	c.st->req.n = 0;
	c.st->req.arm = 0;
	bpf_loop(ATRACE_UNWIND_MAX, disarm_step, &c, 0);
	if (c.st->req.n)
		submit_and_wait(&c.st->req, sp);
}

SEC("uprobe.s")
int unwind_start(struct pt_regs *ctx)
{
	disarm(DISARM_UNWIND, PT_REGS_SP(ctx));
	return 0;
}

/* _Unwind_Backtrace walks the stack and returns: nothing is unwound. The
 * frames are remembered apart from an unwind's (a destructor may walk
 * while an exception is on its way) and re-armed at its return
 * (unwind_walk_end). */
SEC("uprobe.s")
int unwind_walk(struct pt_regs *ctx)
{
	disarm(DISARM_WALK, PT_REGS_SP(ctx));
	return 0;
}

/*
 * A stack switch (swapcontext, setcontext; a coroutine library's own copy).
 * The kernel keeps one LIFO list of return instances per thread and takes
 * an instance whose slot lies below the stack pointer for dead (after
 * longjmp): on entering a probed call it frees the dead ones on top
 * (cleanup_return_instances), and at the trampoline it jumps to the
 * original address of the last instance it pops. Once a thread runs on
 * another stack, both go wrong: a call on a context stack that lies above
 * a pending frame frees that frame's instance, whose return then finds the
 * trampoline with another frame's instance (a jump into the wrong caller)
 * or none (SIGILL). So at every switch no slot of the thread keeps the
 * trampoline: each gets its original address back and the calls return on
 * their own, unseen (recorded here as ended). The instances the kernel
 * keeps for them are harmless: no trampoline leads to them, a probed call
 * entered later frees those below its stack pointer and leaves those above,
 * and it returns, through the trampoline, with them still above it (a call
 * that switched stacks has no trampoline left), so the kernel finds the
 * next instance alive and jumps to the call's own return address.
 */
SEC("uprobe.s")
int unwind_switch(struct pt_regs *ctx)
{
	disarm(DISARM_SWITCH, PT_REGS_SP(ctx));
	return 0;
}

struct settle_ctx {
	struct atrace_unwind_state *st;
	__u64 sp, how, tramp;
	__u32 tgid, tid;
	__u32 from; /* first frame of fr settled */
	bool record;
};

/* Frame i: unwound (its slot lies at or below sp) or not; true for the
 * frames that survive. */
static __always_inline bool settle_frame(__u64 i, struct settle_ctx *c, struct atrace_saved_frame **out)
{
	struct atrace_saved_frame *f = &c->st->fr[i & (ATRACE_UNWIND_MAX - 1)];

	*out = f;
	if (f->stack > c->sp)
		return true;
	if (c->record && f->id)
		emit_unwound(c->tgid, c->tid, f, c->how);
	return false;
}

/* At a catch: the surviving frames get their trampoline back where the
 * slot still holds the original. */
static long catch_step(__u64 i, struct settle_ctx *c)
{
	struct atrace_unwind_state *st = c->st;
	struct atrace_saved_frame *f;
	__u32 n;

	i += c->from;
	if (i >= st->n || i >= ATRACE_UNWIND_MAX)
		return 1;
	if (!settle_frame(i, c, &f))
		return 0;
	n = st->req.n;
	if (n >= ATRACE_UNWIND_MAX || read_slot(f->stack) != f->orig)
		return 0;
	if (n > 0 && st->req.w[(n - 1) & (ATRACE_UNWIND_MAX - 1)].addr == f->stack)
		return 0; /* chained: the same slot */
	st->req.w[n].addr = f->stack;
	st->req.w[n].expect = f->orig;
	st->req.w[n].value = c->tramp;
	st->req.n = n + 1;
	return 0;
}

/* At a thread's exit: nothing to re-arm. */
static long exit_step(__u64 i, struct settle_ctx *c)
{
	struct atrace_saved_frame *f;

	if (i >= c->st->n || i >= ATRACE_UNWIND_MAX)
		return 1;
	settle_frame(i, c, &f);
	return 0;
}

static __always_inline void settle_init(struct settle_ctx *c, struct atrace_unwind_state *st, __u64 sp,
					__u64 how)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();

	c->st = st;
	c->sp = sp;
	c->how = how;
	c->tgid = pid_tgid >> 32;
	c->tid = (__u32)pid_tgid;
	c->record = bpf_map_lookup_elem(&traced_tgids, &c->tgid) != 0;
}

/* Frames whose slot lies at or below the catcher's stack pointer were
 * unwound: recorded (for a traced process); the others are re-armed. */
SEC("uprobe.s")
int unwind_catch(struct pt_regs *ctx)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct atrace_unwind_state *st = bpf_task_storage_get(&unwind_states, t, 0, 0);
	struct settle_ctx c = {};

	/* At the entry of a function called from the catching frame: the slot
	 * of the call the exception left holds this call's return address. */
	if (!st || !st->n)
		return 0;
	settle_init(&c, st, PT_REGS_SP(ctx), ATRACE_UNWIND_CAUGHT);
	c.tramp = trampoline(t);
	st->req.n = 0;
	st->req.arm = 1;
	if (c.tramp)
		bpf_loop(ATRACE_UNWIND_MAX, catch_step, &c, 0);
	else
		bpf_loop(ATRACE_UNWIND_MAX, exit_step, &c, 0);
	st->n = 0;
	st->walk = 0;
	if (st->req.n)
		submit_and_wait(&st->req, PT_REGS_SP(ctx));
	return 0;
}

/* At a `ret` of _Unwind_Backtrace (the stack pointer at its own return
 * slot): the walk's frames, all above, get the trampoline back where the
 * slot still holds the original, as at a catch; none is recorded. A walk
 * left by longjmp or a throw from its callback never gets here: its
 * frames stay disarmed, their returns unseen (docs/exceptions.md). */
SEC("uprobe.s")
int unwind_walk_end(struct pt_regs *ctx)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct atrace_unwind_state *st = bpf_task_storage_get(&unwind_states, t, 0, 0);
	struct settle_ctx c = {};

	/* Only the `ret` of the walk that disarmed: sp is its return slot. */
	if (!st || !st->walk || PT_REGS_SP(ctx) != st->walk_sp)
		return 0;
	settle_init(&c, st, PT_REGS_SP(ctx), 0);
	c.record = false;
	c.from = st->walk - 1;
	c.tramp = trampoline(t);
	st->req.n = 0;
	st->req.arm = 1;
	if (c.tramp)
		bpf_loop(ATRACE_UNWIND_MAX, catch_step, &c, 0);
	st->n = c.from;
	st->walk = 0;
	if (st->req.n)
		submit_and_wait(&st->req, PT_REGS_SP(ctx));
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(unwind_exit, struct task_struct *p)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct atrace_unwind_state *st = bpf_task_storage_get(&unwind_states, t, 0, 0);
	struct settle_ctx c = {};
	struct pt_regs *regs;

	if (!st || !st->n)
		return 0;
	regs = (struct pt_regs *)bpf_task_pt_regs(t);
	settle_init(&c, st, BPF_CORE_READ(regs, sp), ATRACE_UNWIND_THREAD_EXIT);
	bpf_loop(ATRACE_UNWIND_MAX, exit_step, &c, 0);
	st->n = 0;
	st->walk = 0;
	return 0;
}

/*
 * release_scan: after the recording, no slot of atrace's may keep the
 * trampoline in a process that goes on, or an unwind through it after
 * atrace has gone aborts the program. Writing a slot is safe only while
 * its thread cannot run: otherwise the frame may return and a new call put
 * its own return address in the same slot between the read and the write.
 *
 * A task work (bpf_task_work_schedule_resume, Linux 6.18) holds the thread
 * without touching what it does: the kernel runs release_cb in the thread
 * before its next instruction in user mode, whatever brings it there (the
 * end of a system call, an interrupt, a signal's delivery), and sets no
 * pending signal (TWA_RESUME): a blocking system call is neither woken nor
 * interrupted. A running thread gets there at once (the kernel kicks its
 * CPU) and hands its slots over as a request, like an unwind's start.
 * A thread that is in the kernel (asleep, in a system call) or off its CPU
 * once the work is queued cannot run its own code before release_cb: the
 * scan then hands its slots to the recorder, which writes them at once,
 * while the requests wait (one lock). release_cb, when that thread comes
 * back, finds nothing left and returns.
 */
extern int bpf_task_work_schedule_resume_impl(struct task_struct *task, struct bpf_task_work *tw,
					      void *map__map, bpf_task_work_callback_t callback,
					      void *aux__prog) __ksym __weak;

struct release_work {
	struct bpf_task_work tw;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct release_work);
} release_works SEC(".maps");

/* The scan's writes (one runner at a time: the recorder's lock). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct atrace_unwind_req);
} release_scratch SEC(".maps");

static int release_cb(struct bpf_map *map, void *key, void *value)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(t);

	disarm(DISARM_RELEASE, BPF_CORE_READ(regs, sp));
	return 0;
}

/* atrace's armed slots of thread t, read from its stack. */
static __always_inline __u32 armed_slots(struct task_struct *t, __u64 tramp, struct atrace_unwind_req *req)
{
	struct disarm_ctx c = {};

	c.tramp = tramp;
	c.ri = (__u64)BPF_CORE_READ(t, utask, return_instances);
	c.only_ours = true;
	c.req = req;
	c.task = t;
	req->n = 0;
	if (c.ri)
		bpf_loop(ATRACE_UNWIND_MAX, disarm_step, &c, 0);
	return req->n;
}

/* The state of thread t's task work (enum bpf_task_work_state); -1: none set
 * up for t (a thread that had the same id before). */
static __always_inline int work_state(struct release_work *w, struct task_struct *t)
{
	struct bpf_task_work_ctx *ctx = 0;

	/* struct bpf_task_work is the kernel's pointer to its context. */
	bpf_probe_read_kernel(&ctx, sizeof(ctx), &w->tw);
	if (!ctx || BPF_CORE_READ(ctx, task) != t)
		return -1;
	return BPF_CORE_READ(ctx, state);
}

SEC("iter.s/task")
int release_scan(struct bpf_iter__task *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	struct task_struct *t = ctx->task;
	struct atrace_release_rec rec = {};
	struct atrace_unwind_req *req;
	struct release_work *w, zero = {};
	__u32 k = 0, n, i;
	__u64 tramp;
	int state;

	if (!t)
		return 0;
	rec.tgid = t->tgid;
	rec.tid = t->pid;
	if (!bpf_map_lookup_elem(&traced_tgids, &rec.tgid))
		return 0;
	tramp = trampoline(t);
	req = bpf_map_lookup_elem(&release_scratch, &k);
	if (!tramp || !req || !armed_slots(t, tramp, req))
		return 0;
	/* Hold the thread (a work already queued or running stays: -EBUSY). */
	bpf_map_update_elem(&release_works, &rec.tid, &zero, BPF_NOEXIST);
	w = bpf_map_lookup_elem(&release_works, &rec.tid);
	if (!w)
		return 0;
	bpf_task_work_schedule_resume_impl(t, &w->tw, &release_works, release_cb, 0);
	/* Held: the work runs now (the thread is in release_cb), or it is
	 * queued and the thread is, at this point, not running user code:
	 * asleep in the kernel or off its CPU. From here on, its stack
	 * changes only through the recorder. */
	state = work_state(w, t);
	rec.held = state == BPF_TW_RUNNING ||
		   (state == BPF_TW_SCHEDULED && (t->__state != 0 /* TASK_RUNNING */ || !t->on_cpu));
	/* The slots as they are now (read after the check above). */
	n = armed_slots(t, tramp, req);
	rec.n = n;
	bpf_seq_write(seq, &rec, sizeof(rec));
	for (i = 0; i < ATRACE_UNWIND_MAX; i++) {
		if (i >= n || i >= req->n)
			break;
		bpf_seq_write(seq, &req->w[i], sizeof(req->w[i]));
	}
	return 0;
}
