/* args_cost.sh's workload: N calls of one function, timed on the thread's
 * CPU clock, printed as ns per call. Built at -O0, so each function starts
 * with `push %rbp` (an emulated probe at +0, with or without --args: the
 * comparison is of the values alone).
 *   args_workload ints|str N */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

__attribute__((noipa)) long bench_ints(long a, long b) { return a ^ b; }
__attribute__((noipa)) long bench_str(const char *s) { return s[0]; }

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  long n = atol(argv[2]), sum = 0;
  const char *s = "/usr/share/doc/some/path/name.txt";
  double t0 = now_ns();
  if (strcmp(argv[1], "ints") == 0)
    for (long i = 0; i < n; i++) sum += bench_ints(i, 12345);
  else
    for (long i = 0; i < n; i++) sum += bench_str(s);
  double t1 = now_ns();
  printf("ns_per_call=%.1f sum=%ld\n", (t1 - t0) / n, sum);
  return 0;
}
