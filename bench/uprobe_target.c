/*
 * uprobe_target FUNCTION N: calls FUNCTION N times in a loop and prints the
 * time per call. FUNCTION is the symbol name (bench_fn_singlestep, ...; see
 * bench_fns.h, or run without arguments for the list). The probed functions
 * live in other translation units (fn_*.c, fn_entries.S), built so that
 * their first instruction takes a known uprobe path, and cannot be inlined.
 * Only the loop is timed, so start-up and attaching are not counted; it is
 * timed twice: elapsed (CLOCK_MONOTONIC) and CPU time of the calling thread
 * (CLOCK_THREAD_CPUTIME_ID, user + system). A uprobe hit, its BPF program and
 * its return probe all run in the traced thread and count in its CPU time;
 * time during which other work on the machine preempts the thread does not.
 *
 * Output, one line (parsed by uprobe_cost.sh and uprobe_paths.sh):
 *   fn=FUNCTION calls=N ns_total=T ns_per_call=X.XXX cpu_ns_per_call=Y.YYY
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_fns.h"

#define FUNCTIONS(X)                                                       \
	X(bench_fn_singlestep) X(bench_fn_push) X(bench_fn_nop5)           \
	X(bench_fn_nop1x5) X(bench_fn_endbrpush) X(bench_e_movimm)         \
	X(bench_e_movreg) X(bench_e_subrsp) X(bench_e_endbr64) X(bench_e_movrr) \
	X(bench_e_push) X(bench_e_jmp0) X(bench_e_nop1) X(bench_e_nop2)    \
	X(bench_e_nop3) X(bench_e_nop4) X(bench_e_nop6) X(bench_e_nop5)    \
	X(bench_e_nop5split)

static volatile long sink_acc;

/* One loop per function, calling it directly as a traced program would. */
#define RUN(F)                                  \
	static void run_##F(long n)             \
	{                                       \
		long acc = 0;                   \
		for (long i = 0; i < n; i++)    \
			acc += F(i);            \
		sink_acc = acc;                 \
	}
FUNCTIONS(RUN)

struct entry {
	const char *name;
	void (*run)(long);
};
#define ENTRY(F) {#F, run_##F},
static const struct entry entries[] = {FUNCTIONS(ENTRY)};
#define NENTRIES (sizeof entries / sizeof entries[0])

static long long now_ns(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void usage(const char *argv0)
{
	fprintf(stderr, "usage: %s FUNCTION N\nfunctions:", argv0);
	for (size_t k = 0; k < NENTRIES; k++)
		fprintf(stderr, " %s", entries[k].name);
	fprintf(stderr, "\n");
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		usage(argv[0]);
		return 2;
	}
	char *end;
	long n = strtol(argv[2], &end, 10);
	if (*end || n <= 0) {
		fprintf(stderr, "uprobe_target: N must be a positive integer, got '%s'\n", argv[2]);
		return 2;
	}
	const struct entry *e = NULL;
	for (size_t k = 0; k < NENTRIES; k++)
		if (strcmp(argv[1], entries[k].name) == 0)
			e = &entries[k];
	if (!e) {
		fprintf(stderr, "uprobe_target: unknown function '%s'\n", argv[1]);
		usage(argv[0]);
		return 2;
	}

	long long c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	long long t0 = now_ns(CLOCK_MONOTONIC);
	e->run(n);
	long long t1 = now_ns(CLOCK_MONOTONIC);
	long long c1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	printf("fn=%s calls=%ld ns_total=%lld ns_per_call=%.3f cpu_ns_per_call=%.3f\n", e->name, n,
	       t1 - t0, (double)(t1 - t0) / (double)n, (double)(c1 - c0) / (double)n);
	return 0;
}
