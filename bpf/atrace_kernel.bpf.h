/* SPDX-License-Identifier: GPL-2.0 */
/*
 * atrace's kernel-event programs (tracepoints of the traced processes'
 * threads, by group) and the thread-exit programs: part of atrace.bpf.c,
 * included at its end (one object, one skeleton; the helpers, maps and
 * settings are that file's). The list is in atrace.bpf.c's first comment.
 */

/* A kernel event of thread `tid` of process `tgid`: the thread the event is
 * about, which is not always the current one (wake-ups, switch-in). */
static __always_inline void emit_args(__u64 ts, __u32 tgid, __u32 tid, __u16 kind, __u32 flags,
				      __u64 arg0, __u64 arg1)
{
	struct atrace_rec_args *r;
	__u32 cpu;

	r = reserve(&cpu, sizeof(*r), kind, ts, tgid, tid);
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

	r = reserve(&cpu, sizeof(*r), kind, ts, tgid, tid);
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

/* Who woke a task. sched_wakeup is not always emitted by the waker: a
 * wake-up queued to the woken task's CPU (TTWU_QUEUE) is finished there,
 * in whatever runs on that CPU, and that is the current task the
 * tracepoint sees. sched_waking is emitted by try_to_wake_up in the
 * waker's context, once the task is known to be asleep: the waker and the
 * time are kept in the woken task's storage until its sched_wakeup, and
 * the event carries that time (a queued wake-up completes later, when the
 * waker may have moved on to another function). In interrupt context
 * the current task is whichever the interrupt landed on (0: the idle task). */
struct waking {
	__u64 ts;
	__u32 waker;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct waking);
} wakers SEC(".maps");

SEC("tp_btf/sched_waking")
int BPF_PROG(sched_waking, struct task_struct *p)
{
	struct waking *w;

	if (!traced(p->tgid))
		return 0;
	w = bpf_task_storage_get(&wakers, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (w) {
		w->ts = bpf_ktime_get_ns();
		w->waker = (__u32)bpf_get_current_pid_tgid();
	}
	return 0;
}

static __always_inline int wakeup(struct task_struct *p, __u64 ts, __u32 waker)
{
	__u32 tgid = p->tgid;

	if (!traced(tgid))
		return 0;
	emit_args(ts, tgid, p->pid, ATRACE_REC_WAKEUP, 0, waker, p->thread_info.cpu);
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(sched_wakeup, struct task_struct *p)
{
	struct waking *w = bpf_task_storage_get(&wakers, p, 0, 0);
	__u32 who = (__u32)bpf_get_current_pid_tgid();
	__u64 ts = bpf_ktime_get_ns();

	if (w && w->ts) {
		who = w->waker;
		ts = w->ts;
		w->ts = 0;
	}
	return wakeup(p, ts, who);
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(sched_wakeup_new, struct task_struct *p)
{
	return wakeup(p, bpf_ktime_get_ns(), (__u32)bpf_get_current_pid_tgid());
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

/* The fork record, with the child's thread pointer: copy_thread() set its
 * fs_base before this tracepoint (fastpath/thread_pointers.h maps it to the
 * child's tid). */
static __always_inline void emit_fork(__u64 ts, __u32 tgid, bool thread,
				      struct task_struct *child)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct atrace_rec_fork *r;
	__u32 cpu;

	r = reserve(&cpu, sizeof(*r), ATRACE_REC_FORK, ts, tgid, tid);
	if (!r)
		return;
	fill_hdr(&r->a.hdr, ts, tgid, tid, thread ? 1 : 0, cpu, ATRACE_REC_FORK);
	r->a.arg0 = child->tgid;
	r->a.arg1 = child->pid;
	r->thread_pointer = BPF_CORE_READ(child, thread.fsbase);
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
}

/* Loaded for the proc group, for --follow-forks (which needs the map
 * updated even when no proc records are wanted) and for the fast path. */
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
	/* --follow-forks: a child process's fork is recorded without the
	 * proc group too: the replay gives the child a copy of the forking
	 * thread's open calls there, which it may return from. */
	/* The fast path: a new thread's fork, with its thread pointer, names
	 * the thread of its records (fastpath/thread_pointers.h). */
	if (!want_proc && (thread || !follow_forks) && !(thread && thread_forks))
		return 0;
	ts = bpf_ktime_get_ns();
	emit_fork(ts, parent_tgid, thread, child);
	/* The new task's name, in its own stream: it starts with it. */
	if (thread || follow_forks)
		emit_comm(ts, child_tgid, child->pid, ATRACE_REC_COMM, child->comm);
	return 0;
}

/* Loaded for the proc group, for launched targets (before_exec), --cgroup
 * and --follow-forks. */
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
	/* --cgroup: a program started in the cgroup (moved in, then exec'd:
	 * what systemd and container runtimes do) is traced from its exec,
	 * in the files probed at the start (uprobes are per file); the
	 * recorder finds it in the map (Recorder::note_joined). */
	if (cgroup_id && bpf_get_current_ancestor_cgroup_id(cgroup_level) == cgroup_id) {
		__u8 one = 1;

		bpf_map_update_elem(&traced_tgids, &tgid, &one, BPF_NOEXIST);
	}
	if (!traced(tgid))
		return 0;
	/* --follow-forks: the new program starts with no open call. The old
	 * program's calls ended here without their returns (the replay closes
	 * them at the EXEC record, written then without the proc group too);
	 * left on the thread's stacks, they would look left by a longjmp. */
	if (follow_forks) {
		struct task_struct *cur = bpf_get_current_task_btf();

		bpf_task_storage_delete(&sp_stacks, cur);
		bpf_task_storage_delete(&call_stacks, cur);
	}
	if (!want_proc && !follow_forks)
		return 0;
	ts = bpf_ktime_get_ns();
	r = reserve(&cpu, sizeof(*r), ATRACE_REC_EXEC, ts, tgid, p->pid);
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
		if (forget_exited)
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
