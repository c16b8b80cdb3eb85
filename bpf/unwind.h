/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Exception-safe return probes (bpf/unwind.bpf.c): what the BPF side and
 * the recorder (record/unwind_guard.cpp) share besides the records of
 * bpf/atrace.h.
 *
 *   struct atrace_unwind_key   a probed function as the kernel knows it:
 *                              its file (device, inode) and file offset
 *   enum atrace_unwind_how     why an UNWIND record was written (arg0)
 *   struct atrace_unwind_req   slots the recorder must write before the
 *                              thread goes on (the programs wait for it)
 *   ATRACE_UNWIND_MAX          return instances walked, frames remembered
 */
#ifndef ATRACE_BPF_UNWIND_H
#define ATRACE_BPF_UNWIND_H

#ifdef __BPF__
/* vmlinux.h provides the __u* types for the BPF side. */
#else
#include <linux/types.h>
#endif

/* The kernel keeps at most 64 return instances per thread
 * (MAX_URETPROBE_DEPTH); the walk never needs more. */
#define ATRACE_UNWIND_MAX 64

/* Key of the map that turns a return instance's uprobe into atrace's
 * probe id. dev is the kernel's encoding (major << 20 | minor). */
struct atrace_unwind_key {
	__u64 ino;
	__u64 offset;
	__u32 dev;
	__u32 pad;
};

/* ATRACE_REC_UNWIND records (struct atrace_rec_args): hdr.id = probe id,
 * arg0 = how the call ended, arg1 = its return-address slot. */
enum atrace_unwind_how {
	ATRACE_UNWIND_CAUGHT = 1,      /* an exception was caught above it */
	ATRACE_UNWIND_THREAD_EXIT = 2, /* its thread ended while unwinding (pthread_exit, cancel) */
	ATRACE_UNWIND_STACK_SWITCH = 3, /* its thread switched stacks (swapcontext, setcontext):
					 * its return address was given back, its return is
					 * not seen; the record is at the switch */
	/* Written by atrace.bpf.c's function programs (struct atrace_rec_unwind):
	 * the thread was seen at or above the call's slot without its return. */
	ATRACE_UNWIND_ABANDONED = 4,     /* longjmp/siglongjmp left it: its return probe was dropped */
	ATRACE_UNWIND_NESTING_LIMIT = 5, /* it had no return probe: past the kernel's 64 nested ones */
};

/*
 * A request: write `value` at `addr` in process `tgid` where it still holds
 * `expect`, then set served[tid] = seq. The thread waits in the program
 * until then (or gives up after about a second).
 */
struct atrace_unwind_write {
	__u64 addr;
	__u64 expect;
	__u64 value;
};
struct atrace_unwind_req {
	__u32 tgid;
	__u32 tid;
	__u64 seq;
	__u32 n;
	__u32 arm; /* 1: the writes put the trampoline back (a catch re-arms) */
	struct atrace_unwind_write w[ATRACE_UNWIND_MAX];
};

/* A frame whose trampoline was taken out (bpf/unwind.bpf.c). */
struct atrace_saved_frame {
	__u64 stack; /* address of the return-address slot */
	__u64 orig;  /* the return address written back */
	__u32 id;    /* atrace's probe id; 0: another tracer's probe */
	__u32 pad;
};

/* A thread's unwind state (map unwind_states, bpf/shared_maps.h): n > 0
 * while an unwind it started has frames it has not settled. */
struct atrace_unwind_state {
	__u32 n;
	__u32 walk; /* a stack walk runs: 1 + index of its first frame in fr */
	__u64 walk_sp; /* its stack pointer at the entry: its return slot */
	struct atrace_saved_frame fr[ATRACE_UNWIND_MAX];
	struct atrace_unwind_req req; /* the request being built */
};

/*
 * The release (after the recording, docs/exceptions.md): the scan of a
 * process's threads (iterator release_scan) writes, per thread that still
 * has a slot of atrace's holding the trampoline, this header and then `n`
 * struct atrace_unwind_write. `held`: the thread cannot run an instruction
 * of its own before the recorder has written them, so it may write them
 * now; otherwise it will hand them over itself, as a request, at its next
 * return to user mode.
 */
struct atrace_release_rec {
	__u32 tgid;
	__u32 tid;
	__u32 held;
	__u32 n;
};

#endif /* ATRACE_BPF_UNWIND_H */
