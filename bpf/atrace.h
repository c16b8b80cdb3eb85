/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The record layout shared by the BPF programs (bpf/atrace.bpf.c) and the
 * recorder (userspace/). It is the only contract between the two: every
 * record starts with struct atrace_rec_hdr, whose `kind` says which struct
 * follows. Nothing here knows about the trace file (formats/).
 *
 * Table of contents
 *   enum atrace_rec_kind     what a record is
 *   struct atrace_rec_hdr    the 24 bytes every record starts with
 *   struct atrace_rec_comm   thread name at thread exit
 *   ATRACE_MAX_CPUS          size bound of the per-CPU ring array
 */
#ifndef ATRACE_BPF_ATRACE_H
#define ATRACE_BPF_ATRACE_H

#ifdef __BPF__
/* vmlinux.h provides the __u* types for the BPF side. */
#else
#include <linux/types.h>
#endif

#define ATRACE_MAX_CPUS 1024
#define ATRACE_COMM_LEN 16

/* Kinds are small so a later compact format can fold them into a byte. */
enum atrace_rec_kind {
	ATRACE_REC_FUNC_ENTRY = 1, /* uprobe on a function's entry; id = probe cookie */
	ATRACE_REC_FUNC_EXIT = 2,  /* uretprobe of the same function; id = cookie */
	ATRACE_REC_THREAD_EXIT = 3, /* a traced thread exits; followed by its comm */
};

/*
 * 24 bytes, naturally aligned, no padding holes (so the BPF and C++ sides
 * agree without packing attributes). The ring adds its own 8-byte header.
 */
struct atrace_rec_hdr {
	__u64 ts;   /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u32 tgid; /* process id of the thread */
	__u32 tid;  /* thread id */
	__u32 id;   /* function/probe id: the BPF cookie set at attach time */
	__u16 cpu;  /* CPU the record was written on */
	__u16 kind; /* enum atrace_rec_kind */
};

struct atrace_rec_comm {
	struct atrace_rec_hdr hdr;
	char comm[ATRACE_COMM_LEN];
};

#endif /* ATRACE_BPF_ATRACE_H */
