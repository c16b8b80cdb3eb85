/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The record layout shared by the BPF programs (bpf/atrace.bpf.c) and the
 * recorder (record/). It is the only contract between the two: every
 * record starts with struct atrace_rec_hdr, whose `kind` says which struct
 * follows. Nothing here knows about the trace file (formats/).
 *
 * Table of contents
 *   enum atrace_rec_kind     what a record is
 *   struct atrace_rec_hdr    the 24 bytes every record starts with
 *   struct atrace_rec_comm   a thread name (thread exit, rename, new thread)
 *   struct atrace_rec_args   a kernel event with up to two numbers
 *   struct atrace_rec_fork   a task created, with its thread pointer
 *   struct atrace_rec_exec   a program executed
 *   struct atrace_rec_usdt   a USDT probe fired, with its arguments
 *   struct atrace_rec_module a watched module mapped or unmapped
 *   struct atrace_rec_values a function's argument or return registers
 *   struct atrace_rec_net    a message sent or received (the net group)
 *   struct atrace_lane_*     a CPU's lane of function entries and exits
 *   ATRACE_USDT_*            USDT cookies, argument and string limits
 *   ATRACE_MAX_CPUS          size bound of the per-CPU ring array
 *   ATRACE_LOST_SLOTS        loss counters, one per kind
 *   ATRACE_LOSSY_THREADS     threads whose losses wait for their GAP record
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
#define ATRACE_PATH_LEN 256 /* exec file names are cut there */
#define ATRACE_LOST_SLOTS 40 /* > the largest kind */
#define ATRACE_LOSSY_THREADS 4096 /* threads with losses not yet marked at once */

/*
 * Kernel kinds (16 and up) carry the trace file's kind numbers
 * (formats/FORMAT.md) and the fields of formats/trace_types.h, so the
 * recorder converts a record without a table.
 */
enum atrace_rec_kind {
	ATRACE_REC_FUNC_ENTRY = 1, /* uprobe on a function's entry; id = probe cookie */
	ATRACE_REC_FUNC_EXIT = 2,  /* uretprobe of the same function; id = cookie */
	ATRACE_REC_THREAD_EXIT = 3, /* a traced thread exits; rec_comm: its name */
	ATRACE_REC_FUNC_VALUES = 4, /* rec_values: id = function id; the arguments or
				     * return value of the entry or exit record of that
				     * thread, id and ts (record --args/--retval) */
	ATRACE_REC_FUNC_STACK = 5,  /* rec_stack: id = function id; the user call stack
				     * of the entry record of that thread, id and ts
				     * (record --stack) */
	ATRACE_REC_SWITCH_OUT = 16, /* rec_args: id = prev_state, arg0 = next tid */
	ATRACE_REC_SWITCH_IN = 17,  /* rec_args: arg0 = prev tid */
	ATRACE_REC_WAKEUP = 18,     /* rec_args: arg0 = waker tid, arg1 = target cpu */
	ATRACE_REC_MIGRATE = 19,    /* rec_args: arg0 = orig cpu, arg1 = dest cpu */
	ATRACE_REC_SYS_ENTER = 20,  /* rec_args: arg0 = nr */
	ATRACE_REC_SYS_EXIT = 21,   /* rec_args: arg0 = nr, arg1 = ret */
	ATRACE_REC_FAULT = 22,      /* rec_args: id = flags, arg0 = address, arg1 = ip */
	ATRACE_REC_FORK = 23,       /* rec_fork: id = flags, arg0 = child pid, arg1 = child tid */
	ATRACE_REC_EXEC = 24,       /* rec_exec */
	ATRACE_REC_PROC_EXIT = 25,  /* rec_args: arg0 = exit code (wait status) */
	ATRACE_REC_COMM = 26,       /* rec_comm: the thread's (new) name */
	ATRACE_REC_GAP = 28,        /* rec_args: arg0 = events of this thread lost just
				     * before (the file's GAP, 33: its 28 is the
				     * per-CPU LOST the footer replaced) */
	ATRACE_REC_USDT = 29,       /* rec_usdt (or rec_usdt_str): id = probe id */
	ATRACE_REC_UNWIND = 30,     /* rec_args: id = probe id, unwound (bpf/unwind.h) */
	ATRACE_REC_MODULE_LOAD = 31, /* rec_module: id = watched module index; its init runs */
	ATRACE_REC_MODULE_UNLOAD = 32, /* rec_module: the same; its fini runs (dlclose, exit) */
	ATRACE_REC_FILTER_HINT = 33, /* hdr only: id crossed a filter threshold; wakes the recorder */
	ATRACE_REC_NET_MSG = 36,    /* rec_net: id = direction | protocol (ATRACE_NET_*) */
};

/*
 * Relevance filters (issue 5). Function ids index two maps:
 *   fn_state  shared, mmap-able: the recorder reads and writes it directly
 *   fn_stat   per CPU: what the programs measured, summed by the recorder
 * A link's cookie is id | gen << 32; of the links on one hit, the first
 * program to run records it and the older links' skip it (bpf/atrace.bpf.c,
 * struct hit_mark), so a link group can be rebuilt without a function (new
 * links first, then the old ones closed) and no call is seen twice or not
 * at all. fn_state[id].gen decides alone where a thread has no storage.
 */
struct atrace_fn_state {
	__u32 gen;   /* generation of the newest links holding this id */
	__u32 off;   /* entries are no longer recorded: enum atrace_off */
	__u64 calls; /* entries, counted atomically: only with a max-calls rule */
	__u32 hinted; /* the hint was sent (once per function) */
	__u32 keep;   /* --filter-keep: the programs never turn it off */
	__u64 limit_ns; /* absolute rule: mean below this turns it off (the
			 * threshold plus the part of the probe cost a measured
			 * call includes, by entry path); 0: no rule */
	__u64 cost_ns;  /* what one call's probes cost (entry + return, by
			 * entry path): its callers' clocks leave it out */
	__u64 early_limit_ns; /* the early rule's bar: a mean below this after
			       * filter_early_calls calls turns it off */
};

/* Who turned a function off: the recorder, or a program at once when the
 * function reached its max-calls count or crossed the absolute threshold
 * on its CPU (so that no more of its calls are recorded while the
 * recorder wakes up). */
enum atrace_off {
	ATRACE_ON = 0,
	ATRACE_OFF_RECORDER = 1,
	ATRACE_OFF_MAX_CALLS = 2,
	ATRACE_OFF_THRESHOLD = 3,
};

struct atrace_fn_stat {
	__u64 calls;  /* calls that returned, with their duration measured */
	__u64 sum_ns; /* their summed durations (probe cost included) */
	__s64 open;   /* entries recorded minus exits recorded: summed over CPUs, calls in flight */
};

#define ATRACE_FILTER_STACK 64 /* per-thread frames whose entry time is kept */
#define ATRACE_SP_STACK 256 /* per-thread recorded calls whose slot is kept (a power of 2) */

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

/*
 * The plain function entries and exits (most of a recording's records) do
 * not go through the ring buffers but through one lane per CPU of fixed
 * slots, each a header-only record, in two BPF_F_MMAPABLE arrays the
 * recorder maps (bpf/lanes.bpf.h, record/lanes.h): claiming a slot is a
 * compare-and-swap on the CPU's producer index instead of the ring's
 * locked reservation and commit (docs/BENCHMARKS.md). A slot is published
 * by writing its sequence number (its index + 1) last; the recorder frees
 * slots by advancing the consumer index. The two indices are on cache
 * lines of their own. A GAP record in a lane carries its count in hdr.id.
 */
struct atrace_lane_ctl {
	__u64 prod; /* slots claimed so far */
	__u64 pad1[7];
	__u64 cons; /* slots the recorder has read */
	__u64 pad2[7];
};

struct atrace_lane_slot {
	__u64 seq; /* index + 1 once published */
	struct atrace_rec_hdr hdr;
};

struct atrace_rec_comm {
	struct atrace_rec_hdr hdr;
	char comm[ATRACE_COMM_LEN];
};

/* hdr.id carries a kind's flags byte (see the kinds above). */
struct atrace_rec_args {
	struct atrace_rec_hdr hdr;
	__u64 arg0;
	__u64 arg1;
};

/* ATRACE_REC_UNWIND written by the function programs for a call the
 * thread left without its return (bpf/unwind.h: ATRACE_UNWIND_ABANDONED,
 * _NESTING_LIMIT): a rec_args (arg0 = how, arg1 = its return-address slot)
 * and the time of its entry record, which names the call. */
struct atrace_rec_unwind {
	struct atrace_rec_args a;
	__u64 entry_ts;
};

/* ATRACE_REC_FORK: a rec_args and the child's thread pointer (its x86-64
 * fs_base as copy_thread() left it: the new TLS with CLONE_SETTLS, else the
 * parent's), which names the thread in the fast path's records
 * (fastpath/thread_pointers.h). */
struct atrace_rec_fork {
	struct atrace_rec_args a;
	__u64 thread_pointer;
};

struct atrace_rec_exec {
	struct atrace_rec_hdr hdr;
	char filename[ATRACE_PATH_LEN];
};

/*
 * Modules a selector names (issue 17): one uprobe on each watched module's
 * DT_INIT (the first code of it the dynamic linker runs) and one on its
 * DT_FINI (run by dlclose before the unmap, and at exit), program
 * module_hook (bpf/atrace_module.bpf.h). The cookie:
 *   module index (bits 0-23) | ATRACE_MODULE_UNLOAD (bit 24) |
 *   distance from the module's base to the probed address << 32
 */
#define ATRACE_MODULE_INDEX_MASK 0xffffffu
#define ATRACE_MODULE_UNLOAD (1u << 24)
/* The index of the dynamic linker's _dl_debug_state (r_brk: called each
 * time the list of loaded objects changed) while a module waited for has
 * not come: the recorder then reads the process's mappings, to name a
 * file of the same name mapped in its place (record/late_arrivals.h). */
#define ATRACE_MODULE_LINK_MAP ATRACE_MODULE_INDEX_MASK
struct atrace_rec_module {
	struct atrace_rec_hdr hdr;
	__u64 base; /* the lowest address of the module's mapping */
};

/*
 * USDT probes (issue 6). The link's cookie (libbpf's usdt_cookie) is
 *   probe id | role << 32 | string mask << 40
 * role: an event (rec_usdt), or the begin/end of an interval, recorded as a
 * function entry/exit of the interval's id. The string mask says which
 * arguments are addresses of strings to copy (at most ATRACE_USDT_MAX_STRS
 * of them, each cut at ATRACE_USDT_STR_LEN - 1 bytes).
 */
#define ATRACE_USDT_MAX_ARGS 6
#define ATRACE_USDT_MAX_STRS 2
#define ATRACE_USDT_STR_LEN 128
enum atrace_usdt_role {
	ATRACE_USDT_EVENT = 0,
	ATRACE_USDT_BEGIN = 1,
	ATRACE_USDT_END = 2,
};
struct atrace_rec_usdt {
	struct atrace_rec_hdr hdr;
	__u32 nargs;    /* arguments the probe has (at most ATRACE_USDT_MAX_ARGS kept) */
	__u32 str_mask; /* bit i: args[i] is a string, in str[] in argument order */
	__u64 args[ATRACE_USDT_MAX_ARGS];
};
struct atrace_rec_usdt_str {
	struct atrace_rec_usdt u;
	char str[ATRACE_USDT_MAX_STRS][ATRACE_USDT_STR_LEN];
};

/*
 * Function arguments and return values (issue 20; bpf/atrace_values.bpf.h).
 * fn_values[function id] says what to record; the functions that have a
 * spec are attached with the func_*_values programs, which emit the
 * function's usual entry or exit record and, when they did, a rec_values
 * record with the same header fields (ts, tid, id): that key, not the
 * order of the rings, joins it to its event. The
 * recorder types the registers (sizes, signs) from the user's spec; the
 * programs only copy registers and read strings.
 */
#define ATRACE_VALUE_REGS 6 /* arg1..arg6: rdi rsi rdx rcx r8 r9 */
#define ATRACE_VALUE_STRS 2 /* string arguments per call */
#define ATRACE_VALUE_STR_LEN ATRACE_USDT_STR_LEN
struct atrace_value_spec {
	__u8 entry;   /* record the argument registers at entry */
	__u8 exit;    /* record the return register at exit */
	__u8 ret_str; /* the return value is a string */
	__u8 nstr;    /* string arguments: str_arg[0..nstr) */
	__u8 str_arg[ATRACE_VALUE_STRS]; /* their registers (0 = arg1) */
	__u8 pad[2];
};
enum atrace_str_state { /* formats::StrState */
	ATRACE_STR_OK = 0,
	ATRACE_STR_NULL = 1,
	ATRACE_STR_UNREADABLE = 2,
	ATRACE_STR_CUT = 3,
};
struct atrace_rec_values {
	struct atrace_rec_hdr hdr;
	__u16 of_kind; /* ATRACE_REC_FUNC_ENTRY (regs = arguments) or _EXIT (regs[0] = rax) */
	__u8 nstr;     /* strings in rec_values_str.str */
	__u8 str_state[ATRACE_VALUE_STRS]; /* enum atrace_str_state, per string */
	__u8 pad[3];
	__u64 regs[ATRACE_VALUE_REGS];
};
struct atrace_rec_values_str {
	struct atrace_rec_values v;
	char str[ATRACE_VALUE_STRS][ATRACE_VALUE_STR_LEN];
};

/*
 * User call stacks at the entry of selected functions (record --stack;
 * bpf/atrace_stack.bpf.h): bpf_get_stack(BPF_F_USER_STACK) walks the frame
 * pointers. The record is one of two sizes, by the depth asked for, so
 * the default depth does not reserve room for the largest.
 */
#define ATRACE_STACK_SMALL 32  /* frames of the small record (the default depth) */
#define ATRACE_STACK_MAX 127   /* the cap: the kernel's default perf_event_max_stack */
struct atrace_rec_stack {
	struct atrace_rec_hdr hdr;
	__u64 ret_addr; /* [rsp] at the entry: the caller's return address */
	__u32 nframes;  /* frames in ips */
	__u32 pad;
	__u64 ips[ATRACE_STACK_SMALL]; /* innermost first; ips[0] = the function */
};
struct atrace_rec_stack_big {
	struct atrace_rec_hdr hdr;
	__u64 ret_addr;
	__u32 nframes;
	__u32 pad;
	__u64 ips[ATRACE_STACK_MAX];
};

/*
 * Messages (issue 32; bpf/atrace_net.bpf.h, the net group): one record per
 * send or receive that moved bytes, written at the kernel function's
 * return. hdr.id = ATRACE_NET_RECV (or 0: a send) | protocol << 1.
 *   TCP   addresses and ports of this end and the peer; seq = the stream
 *         sequence number of the first byte (32 bits: the sender's
 *         write_seq and the receiver's copied_seq name the same byte)
 *   UDP   the same, seq 0; the peer is the datagram's address when the
 *         call had one, else the connected peer
 *   UNIX  obj = this socket's inode, peer_obj = the peer socket's (0:
 *         unconnected datagram), seq = bytes this socket sent (or
 *         received) before, counted from the recording's first sight of it
 *   PIPE  obj = the pipe's inode, seq counted the same way per direction
 * Addresses are IPv6-sized: an IPv4 one is in the first 4 bytes with
 * family 4. Ports in host order.
 */
#define ATRACE_NET_RECV 1u
#define ATRACE_NET_NO_OFFSET (1u << 4) /* UNIX, PIPE: seq unknown (too many ends) */
enum atrace_net_proto {
	ATRACE_NET_TCP = 1,
	ATRACE_NET_UDP = 2,
	ATRACE_NET_UNIX_STREAM = 3,
	ATRACE_NET_UNIX_DGRAM = 4,
	ATRACE_NET_PIPE = 5,
};
struct atrace_rec_net {
	struct atrace_rec_hdr hdr;
	__u64 bytes;
	__u64 seq;
	__u64 obj;
	__u64 peer_obj;
	__u8 laddr[16];
	__u8 paddr[16];
	__u16 lport;
	__u16 pport;
	__u8 family; /* 4, 6, or 0 for local channels */
	__u8 pad[3];
	/* The system call's run, entry to exit (the record's time): a send's
	 * bytes left inside it, which clock synchronisation needs. */
	__u64 call_ns;
};

#endif /* ATRACE_BPF_ATRACE_H */
