/*
 * usdt_workload: the loops bench/usdt_cost.sh times, one probe hit per
 * iteration, each loop in a function of its own so the compiler treats them
 * alike:
 *   base  N   no probe: the loop alone (an empty asm keeps it)
 *   hdr   N   ATRACE_EVENT(bench, tick, i, acc): include/atrace/probe.h,
 *             semaphore-guarded, probe instruction the 5-byte NOP
 *   sdt   N   DTRACE_PROBE2(benchsdt, tick, i, acc): sys/sdt.h, no
 *             semaphore, probe instruction the 1-byte `nop`
 * Prints the CPU time of this thread (CLOCK_THREAD_CPUTIME_ID: the uprobe
 * handler and BPF program run in it) and the elapsed time per iteration of
 * the loop only, whether the header probe's semaphore was nonzero
 * (traced) before and after the loop, and whether the kernel had mapped its
 * [uprobes-trampoline] by the end of the loop (it does when it optimizes a
 * probe on a 5-byte NOP into a call: kernel-notes/optimized-nop5-uprobes.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sys/sdt.h>

#include "atrace/probe.h"

static double now_ns(clockid_t c) {
	struct timespec ts;
	clock_gettime(c, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int has_uprobe_trampoline(void) {
	char line[512];
	int found = 0;
	FILE* f = fopen("/proc/self/maps", "r");
	if (!f) return -1;
	while (!found && fgets(line, sizeof line, f)) found = strstr(line, "[uprobes-trampoline]") != NULL;
	fclose(f);
	return found;
}

/* The arguments change every iteration so that a traced run records
 * distinct values and the loop cannot be folded. */
__attribute__((noinline)) static unsigned long loop_base(unsigned long n) {
	unsigned long acc = 0;
	for (unsigned long i = 0; i < n; i++) {
		acc += i;
		__asm__ __volatile__("" ::"r"(i), "r"(acc));
	}
	return acc;
}

__attribute__((noinline)) static unsigned long loop_hdr(unsigned long n) {
	unsigned long acc = 0;
	for (unsigned long i = 0; i < n; i++) {
		acc += i;
		ATRACE_EVENT(bench, tick, i, acc);
		__asm__ __volatile__("" ::"r"(i), "r"(acc));
	}
	return acc;
}

__attribute__((noinline)) static unsigned long loop_sdt(unsigned long n) {
	unsigned long acc = 0;
	for (unsigned long i = 0; i < n; i++) {
		acc += i;
		DTRACE_PROBE2(benchsdt, tick, i, acc);
		__asm__ __volatile__("" ::"r"(i), "r"(acc));
	}
	return acc;
}

int main(int argc, char** argv) {
	if (argc != 3) {
		fprintf(stderr, "usage: %s base|hdr|sdt ITERATIONS\n", argv[0]);
		return 2;
	}
	unsigned long (*loop)(unsigned long);
	if (!strcmp(argv[1], "base")) loop = loop_base;
	else if (!strcmp(argv[1], "hdr")) loop = loop_hdr;
	else if (!strcmp(argv[1], "sdt")) loop = loop_sdt;
	else {
		fprintf(stderr, "usage: %s base|hdr|sdt ITERATIONS\n", argv[0]);
		return 2;
	}
	unsigned long n = strtoul(argv[2], NULL, 10);
	int on_before = ATRACE_ENABLED(bench, tick);
	double c0 = now_ns(CLOCK_THREAD_CPUTIME_ID), w0 = now_ns(CLOCK_MONOTONIC);
	unsigned long acc = loop(n);
	double w1 = now_ns(CLOCK_MONOTONIC), c1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	int on_after = ATRACE_ENABLED(bench, tick);
	printf("%s iterations=%lu cpu_ns_per_iter=%.3f ns_per_iter=%.3f semaphore=%d,%d "
	       "trampoline=%d acc=%lu\n",
	       argv[1], n, (c1 - c0) / (double)n, (w1 - w0) / (double)n, on_before, on_after,
	       has_uprobe_trampoline(), acc);
	return 0;
}
