/*
 * syscall_workload MODE N [BATCH]: makes N cheap system calls and prints the
 * time per call (bench/syscall_cost.sh; issue 4, cost of kernel events).
 *   getppid  syscall(SYS_getppid): the cheapest real system call (no vDSO)
 *   read     read(2) of 1 byte from /dev/zero
 *   idle     no measurement: calls sc_batch once, prints "idle pid=PID",
 *            then sleeps N seconds or until SIGTERM/SIGINT (a process for a
 *            tracer to trace while another, untraced one is measured)
 * The calls are made by sc_batch(), BATCH (default 10000) per call, so that
 * `atrace record --select=sc_batch` has a function to probe whose probe cost
 * is spread over many system calls (a few ns per call at most) and to which
 * the system calls are attributed. The file is built with a frame pointer
 * and without CET (bench/CMakeLists.txt), so sc_batch's first instruction is
 * `push %rbp`: an emulated uprobe, not a single-stepped one (syscall_cost.sh
 * checks it).
 * Only the loop is timed, elapsed (CLOCK_MONOTONIC) and as CPU time of the
 * thread (CLOCK_THREAD_CPUTIME_ID; the BPF programs of a tracepoint run in the
 * traced thread and count in it, ptrace stops and the tracer's own work do
 * not), with the user/system split of getrusage(RUSAGE_THREAD) (tick-sampled,
 * scaled by the kernel: approximate).
 *
 * Output, one line:
 *   mode=M calls=N batch=B ns_total=T ns_per_call=X cpu_ns_per_call=Y
 *   user_ns_per_call=U sys_ns_per_call=S
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum mode { MODE_GETPPID, MODE_READ, MODE_IDLE };

static int zero_fd = -1;
static volatile long sink;

/* The probed function: n system calls of the given mode. */
__attribute__((noinline)) long sc_batch(int mode, long n)
{
	long acc = 0;
	char c;
	if (mode == MODE_GETPPID) {
		for (long i = 0; i < n; i++)
			acc += syscall(SYS_getppid);
	} else if (mode == MODE_READ) {
		for (long i = 0; i < n; i++)
			acc += read(zero_fd, &c, 1);
	}
	return acc;
}

static long long now_ns(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long long rusage_ns(const struct timeval *tv)
{
	return (long long)tv->tv_sec * 1000000000LL + (long long)tv->tv_usec * 1000LL;
}

static volatile sig_atomic_t stop;
static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int usage(const char *argv0)
{
	fprintf(stderr, "usage: %s getppid|read|idle N [BATCH]\n", argv0);
	return 2;
}

int main(int argc, char **argv)
{
	if (argc < 3 || argc > 4)
		return usage(argv[0]);
	enum mode mode;
	if (strcmp(argv[1], "getppid") == 0)
		mode = MODE_GETPPID;
	else if (strcmp(argv[1], "read") == 0)
		mode = MODE_READ;
	else if (strcmp(argv[1], "idle") == 0)
		mode = MODE_IDLE;
	else
		return usage(argv[0]);
	char *end;
	long n = strtol(argv[2], &end, 10);
	long batch = 10000;
	if (*end || n <= 0) {
		fprintf(stderr, "syscall_workload: N must be a positive integer, got '%s'\n", argv[2]);
		return 2;
	}
	if (argc == 4) {
		batch = strtol(argv[3], &end, 10);
		if (*end || batch <= 0) {
			fprintf(stderr, "syscall_workload: BATCH must be a positive integer, got '%s'\n",
				argv[3]);
			return 2;
		}
	}

	if (mode == MODE_IDLE) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_signal;
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGINT, &sa, NULL);
		sink = sc_batch(mode, 1);
		printf("idle pid=%d\n", (int)getpid());
		fflush(stdout);
		long long until = now_ns(CLOCK_MONOTONIC) + n * 1000000000LL;
		while (!stop && now_ns(CLOCK_MONOTONIC) < until) {
			struct timespec ts = {0, 100000000};
			nanosleep(&ts, NULL);
		}
		return 0;
	}

	if (mode == MODE_READ) {
		zero_fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
		if (zero_fd < 0) {
			fprintf(stderr, "syscall_workload: /dev/zero: %s\n", strerror(errno));
			return 1;
		}
	}

	struct rusage r0, r1;
	long acc = 0;
	getrusage(RUSAGE_THREAD, &r0);
	long long c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	long long t0 = now_ns(CLOCK_MONOTONIC);
	for (long done = 0; done < n; done += batch)
		acc += sc_batch(mode, n - done < batch ? n - done : batch);
	long long t1 = now_ns(CLOCK_MONOTONIC);
	long long c1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	getrusage(RUSAGE_THREAD, &r1);
	sink = acc;

	double dn = (double)n;
	printf("mode=%s calls=%ld batch=%ld ns_total=%lld ns_per_call=%.3f cpu_ns_per_call=%.3f "
	       "user_ns_per_call=%.3f sys_ns_per_call=%.3f\n",
	       argv[1], n, batch, t1 - t0, (double)(t1 - t0) / dn, (double)(c1 - c0) / dn,
	       (double)(rusage_ns(&r1.ru_utime) - rusage_ns(&r0.ru_utime)) / dn,
	       (double)(rusage_ns(&r1.ru_stime) - rusage_ns(&r0.ru_stime)) / dn);
	return 0;
}
