/* target_detach_scale: detaching at scale (issue 29). 2,000 functions in
 * one module, all probed, so a detach has 2,000 probes to deal with; a
 * few of them are detached one after another while main, traced too,
 * stays in flight (its pending return is what kept the kernel's link
 * closes from returning while a program runs: record/detacher.h).
 *
 *   target_detach_scale [PHASES] [CALLS] [--tag=X]
 *
 *   f_0000..f_1999  short functions; phase i calls f_i CALLS times
 *                   (default 200), then sleeps 5 ms so that the recorder
 *                   detaches it (with --filter-max-calls below CALLS)
 *                   before the next phase
 *   main            runs PHASES phases (default 20), sleeps 300 ms (every
 *                   detach done), then counts the uprobe_multi links of
 *                   atrace's function programs that hold this process
 *
 * Prints "calls=N" (calls of the f functions), "phases=P", and, from the
 * kernel (bpf(BPF_LINK_GET_NEXT_ID) and each link's info, as root),
 * "links=L" (entry and return links of func_entry/func_exit on this
 * process) and "probes=P" (the offsets they hold), or "links=?" when the
 * kernel will not say. */
#define _GNU_SOURCE
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "../../bench/link_count.h"
#include "target_common.h"

static unsigned long calls;

#define F(n)                                   \
  TRACED unsigned long f##n(unsigned long x) { \
    ++calls;                                   \
    return x * 6364136223846793005u + 1;       \
  }
#define F10(n) F(n##0) F(n##1) F(n##2) F(n##3) F(n##4) F(n##5) F(n##6) F(n##7) F(n##8) F(n##9)
#define F100(n) \
  F10(n##0)     \
  F10(n##1) F10(n##2) F10(n##3) F10(n##4) F10(n##5) F10(n##6) F10(n##7) F10(n##8) F10(n##9)
#define F1000(n) \
  F100(n##0)     \
  F100(n##1) F100(n##2) F100(n##3) F100(n##4) F100(n##5) F100(n##6) F100(n##7) F100(n##8) F100(n##9)
F1000(_0)
F1000(_1)
#undef F

typedef unsigned long (*fn)(unsigned long);
#define F(n) f##n,
static const fn fs[2000] = {F1000(_0) F1000(_1)};
#undef F

int main(int argc, char** argv) {
  target_line_buffered();
  long phases = target_count_arg(argc, argv, 0, 20);
  long n = target_count_arg(argc, argv, 1, 200);
  if (phases > 2000) phases = 2000;
  unsigned long sum = 0;
  for (long p = 0; p < phases; ++p) {
    for (long c = 0; c < n; ++c) {
      sum += fs[p]((unsigned long)c);
      TARGET_BARRIER();
    }
    struct timespec pause = {0, 5 * 1000 * 1000};
    nanosleep(&pause, NULL);
  }
  struct timespec settle = {0, 300 * 1000 * 1000};
  nanosleep(&settle, NULL);
  unsigned links, probes;
  printf("calls=%lu\nphases=%ld\n", calls, phases);
  if (count_atrace_links((uint32_t)getpid(), &links, &probes) == 0)
    printf("links=%u\nprobes=%u\n", links, probes);
  else printf("links=?\n");
  (void)sum;
  return target_exit_code(argc, argv);
}
