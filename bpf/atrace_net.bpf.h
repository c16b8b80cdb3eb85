/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The net group (record --kernel=+net, issue 32): the messages a traced
 * thread sends and receives, one record per system call that moved bytes
 * (struct atrace_rec_net in atrace.h). Part of atrace.bpf.c, included at
 * its end; loaded only when the group is asked for.
 *
 * Two programs on the raw system call tracepoints, not fexit on the
 * protocols' functions: fexit (and kprobes) may be missing (this kernel
 * refuses every fentry/fexit load with EPERM and has no kprobes), while
 * tp_btf sys_enter/sys_exit exist on every kernel atrace runs on (the
 * syscalls group uses them). net_sys_enter keeps, for the calls that move
 * data (read, write, readv, writev, sendto, recvfrom, sendmsg, recvmsg),
 * the fd and the address argument in task storage; net_sys_exit, when the
 * call moved bytes, finds the fd's file and what it is:
 *   a socket (S_IFSOCK): struct socket in private_data; TCP and UDP over
 *     IPv4 or IPv6, unix stream, datagram and seqpacket sockets
 *   a pipe or FIFO (S_IFIFO)
 * At the exit the stream's counters have moved past the bytes just
 * copied, so write_seq - ret (send) and copied_seq - ret (receive) are the
 * TCP sequence number of the first of them, the same on both ends.
 * Receives with MSG_PEEK are not recorded: the bytes stay for the next one.
 */

#define NET_AF_UNIX 1
#define NET_AF_INET 2
#define NET_AF_INET6 10
#define NET_MSG_PEEK 2
#define NET_SOCK_STREAM 1
#define NET_SOCK_DGRAM 2
#define NET_SOCK_SEQPACKET 5
#define NET_IPPROTO_TCP 6
#define NET_IPPROTO_UDP 17
#define NET_S_IFMT 0170000
#define NET_S_IFSOCK 0140000
#define NET_S_IFIFO 0010000

/* x86-64 numbers of the calls that move a message. */
#define NET_NR_READ 0
#define NET_NR_WRITE 1
#define NET_NR_READV 19
#define NET_NR_WRITEV 20
#define NET_NR_SENDTO 44
#define NET_NR_RECVFROM 45
#define NET_NR_SENDMSG 46
#define NET_NR_RECVMSG 47

/* The call in progress, from its entry to its exit. */
struct net_call {
	__s64 nr; /* -1: none */
	__u32 fd;
	__u32 flags; /* recvfrom's, recvmsg's flags (MSG_PEEK) */
	__u64 addr;  /* sendto/recvfrom: the sockaddr; sendmsg/recvmsg: the msghdr */
	__u64 enter_ns; /* when the call entered */
};
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct net_call);
} net_calls SEC(".maps");

/* Local channels have no sequence numbers: each end counts its bytes per
 * direction from the moment the recording first sees it (unix sockets by
 * the socket's inode, pipes by the pipe's). Not preallocated: an unused
 * group costs nothing. When full, an end's offset is unknown
 * (ATRACE_NET_NO_OFFSET). */
struct net_off_key {
	__u64 ino;
	__u32 what; /* protocol << 1 | ATRACE_NET_RECV */
	__u32 pad;
};
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, struct net_off_key);
	__type(value, __u64);
} net_offsets SEC(".maps");

static __always_inline bool net_is_send(__s64 nr)
{
	return nr == NET_NR_WRITE || nr == NET_NR_WRITEV || nr == NET_NR_SENDTO ||
	       nr == NET_NR_SENDMSG;
}

static __always_inline bool net_is_call(__s64 nr)
{
	return net_is_send(nr) || nr == NET_NR_READ || nr == NET_NR_READV ||
	       nr == NET_NR_RECVFROM || nr == NET_NR_RECVMSG;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(net_sys_enter, struct pt_regs *regs, long id)
{
	struct net_call *c;

	if (!net_is_call(id) || !traced(bpf_get_current_pid_tgid() >> 32))
		return 0;
	c = bpf_task_storage_get(&net_calls, bpf_get_current_task_btf(), 0,
				 BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!c)
		return 0;
	c->nr = id;
	c->enter_ns = bpf_ktime_get_ns();
	c->fd = (__u32)BPF_CORE_READ(regs, di);
	c->flags = 0;
	c->addr = 0;
	if (id == NET_NR_SENDTO || id == NET_NR_RECVFROM) {
		c->addr = BPF_CORE_READ(regs, r8);
		c->flags = (__u32)BPF_CORE_READ(regs, r10);
	} else if (id == NET_NR_SENDMSG || id == NET_NR_RECVMSG) {
		c->addr = BPF_CORE_READ(regs, si);
		c->flags = (__u32)BPF_CORE_READ(regs, dx);
	}
	return 0;
}

/* The bytes this end moved in this direction before these `bytes`. */
static __always_inline bool net_offset(__u64 ino, __u32 what, __u64 bytes, __u64 *off)
{
	struct net_off_key k = {.ino = ino, .what = what};
	__u64 *v = bpf_map_lookup_elem(&net_offsets, &k);

	if (!v) {
		__u64 zero = 0;

		bpf_map_update_elem(&net_offsets, &k, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&net_offsets, &k);
		if (!v)
			return false;
	}
	*off = __sync_fetch_and_add(v, bytes);
	return true;
}

/* This end's and the connected peer's address and port. */
static __always_inline void net_inet_ends(struct atrace_rec_net *r, struct sock *sk, __u16 family)
{
	r->lport = BPF_CORE_READ(sk, __sk_common.skc_num);
	r->pport = bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));
	if (family == NET_AF_INET6) {
		r->family = 6;
		BPF_CORE_READ_INTO(&r->laddr, sk, __sk_common.skc_v6_rcv_saddr);
		BPF_CORE_READ_INTO(&r->paddr, sk, __sk_common.skc_v6_daddr);
	} else {
		r->family = 4;
		BPF_CORE_READ_INTO((__u32 *)r->laddr, sk, __sk_common.skc_rcv_saddr);
		BPF_CORE_READ_INTO((__u32 *)r->paddr, sk, __sk_common.skc_daddr);
	}
}

/* A datagram's own address (sendto's destination, recvfrom's source, a
 * msghdr's msg_name) replaces the connected peer's; read from the
 * process, where the call took it from or put it. */
static __always_inline void net_datagram_peer(struct atrace_rec_net *r, const struct net_call *c)
{
	struct sockaddr_in6 sa;
	void *name = (void *)c->addr;

	if (c->nr == NET_NR_SENDMSG || c->nr == NET_NR_RECVMSG) {
		struct user_msghdr m;

		if (!name || bpf_probe_read_user(&m, sizeof(m), name))
			return;
		name = m.msg_name;
	}
	if (!name || bpf_probe_read_user(&sa, sizeof(sa), name))
		return;
	if (sa.sin6_family == NET_AF_INET6) {
		__builtin_memcpy(r->paddr, &sa.sin6_addr, 16);
		r->pport = bpf_ntohs(sa.sin6_port);
		r->family = 6;
	} else if (sa.sin6_family == NET_AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)&sa;

		__builtin_memset(r->paddr, 0, 16);
		__builtin_memcpy(r->paddr, &in->sin_addr, 4);
		r->pport = bpf_ntohs(in->sin_port);
		r->family = 4;
	}
}

/* A socket's inode number (what /proc/PID/fd and `ss -x` show):
 * sock_i_ino()'s, read through struct socket_alloc. */
static __always_inline __u64 net_sock_ino(struct socket *sock)
{
	return sock ? BPF_CORE_READ((struct socket_alloc *)sock, vfs_inode.i_ino) : 0;
}

/* The protocol of a socket, 0 for the ones not recorded. */
static __always_inline __u32 net_sock_proto(struct sock *sk, __u16 family)
{
	__u16 type = BPF_CORE_READ(sk, sk_type), proto = BPF_CORE_READ(sk, sk_protocol);

	if (family == NET_AF_UNIX)
		return type == NET_SOCK_STREAM ? ATRACE_NET_UNIX_STREAM : ATRACE_NET_UNIX_DGRAM;
	if (family != NET_AF_INET && family != NET_AF_INET6)
		return 0;
	if (type == NET_SOCK_STREAM && proto == NET_IPPROTO_TCP)
		return ATRACE_NET_TCP;
	if (type == NET_SOCK_DGRAM && proto == NET_IPPROTO_UDP)
		return ATRACE_NET_UDP;
	return 0;
}

/* The fd's file in the current task, or 0. */
static __always_inline struct file *net_file(__u32 fd)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct fdtable *fdt = BPF_CORE_READ(t, files, fdt);
	struct file **fds;
	struct file *f = 0;

	if (!fdt || fd >= BPF_CORE_READ(fdt, max_fds))
		return 0;
	fds = BPF_CORE_READ(fdt, fd);
	if (bpf_probe_read_kernel(&f, sizeof(f), fds + fd))
		return 0;
	return f;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(net_sys_exit, struct pt_regs *regs, long ret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct atrace_rec_net *r;
	struct net_call *c, call;
	struct socket *sock = 0;
	struct sock *sk = 0;
	struct file *f;
	__u32 proto, flags, cpu;
	__u16 family = 0;
	umode_t mode;
	__s64 nr;
	__u64 ts;

	/* Every system call of the machine ends here: the number first, then
	 * the process, and only then the task's storage. */
	nr = BPF_CORE_READ(regs, orig_ax);
	if (!net_is_call(nr) || ret <= 0 || !traced(pid_tgid >> 32))
		return 0;
	c = bpf_task_storage_get(&net_calls, bpf_get_current_task_btf(), 0, 0);
	/* The exit of the call its entry kept (not of one whose exit was
	 * never seen: an exec). */
	if (!c || c->nr != nr)
		return 0;
	call = *c;
	c->nr = -1;
	if ((call.nr == NET_NR_RECVFROM || call.nr == NET_NR_RECVMSG) && (call.flags & NET_MSG_PEEK))
		return 0;
	f = net_file(call.fd);
	if (!f)
		return 0;
	mode = BPF_CORE_READ(f, f_inode, i_mode) & NET_S_IFMT;
	if (mode == NET_S_IFSOCK) {
		sock = BPF_CORE_READ(f, private_data);
		sk = BPF_CORE_READ(sock, sk);
		if (!sk)
			return 0;
		family = BPF_CORE_READ(sk, __sk_common.skc_family);
		proto = net_sock_proto(sk, family);
		if (!proto)
			return 0;
	} else if (mode == NET_S_IFIFO) {
		proto = ATRACE_NET_PIPE;
	} else {
		return 0;
	}
	flags = (net_is_send(call.nr) ? 0 : ATRACE_NET_RECV) | proto << 1;

	ts = bpf_ktime_get_ns();
	r = reserve(&cpu, sizeof(*r), ATRACE_REC_NET_MSG, ts, pid_tgid >> 32, (__u32)pid_tgid);
	if (!r)
		return 0;
	__builtin_memset((char *)r + sizeof(r->hdr), 0, sizeof(*r) - sizeof(r->hdr));
	fill_hdr(&r->hdr, ts, pid_tgid >> 32, (__u32)pid_tgid, flags, cpu, ATRACE_REC_NET_MSG);
	r->bytes = (__u64)ret;
	r->call_ns = ts > call.enter_ns ? ts - call.enter_ns : 0;
	if (proto == ATRACE_NET_TCP || proto == ATRACE_NET_UDP) {
		net_inet_ends(r, sk, family);
		if (proto == ATRACE_NET_TCP) {
			struct tcp_sock *tp = (struct tcp_sock *)sk;
			__u32 end = (flags & ATRACE_NET_RECV) ? BPF_CORE_READ(tp, copied_seq)
							      : BPF_CORE_READ(tp, write_seq);

			r->seq = (__u32)(end - (__u32)ret);
		} else {
			net_datagram_peer(r, &call);
		}
	} else {
		if (proto == ATRACE_NET_PIPE) {
			r->obj = BPF_CORE_READ(f, f_inode, i_ino);
		} else {
			struct unix_sock *u = (struct unix_sock *)sk;
			struct sock *peer = BPF_CORE_READ(u, peer);

			r->obj = net_sock_ino(sock);
			if (peer)
				r->peer_obj = net_sock_ino(BPF_CORE_READ(peer, sk_socket));
		}
		if (!net_offset(r->obj, flags, r->bytes, &r->seq))
			r->hdr.id |= ATRACE_NET_NO_OFFSET;
	}
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	return 0;
}
