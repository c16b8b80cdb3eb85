/* target_c: a non-PIE C program with exact, argv-given call counts.
 *
 *   target_c [N] [--exit=CODE] [--tag=X] [--reexec=K]   (N defaults to 100)
 *
 *   outer()    1     calls middle() N times
 *   middle()   N     calls leaf() 3 times each; called only from outer()
 *   leaf()     3*N   called only from middle()
 *   sleeper()  3     each sleeps 20 ms with nanosleep; called from main()
 *
 * leaf and middle are reached only through outer, so a report's self times
 * must satisfy outer.self == outer.total - middle.total and
 * middle.self == middle.total - leaf.total exactly.
 *
 * Prints "pid=P" first, then one "name=count" line per function, counted by
 * the program itself. --reexec=K: then execs itself again (argv[0], same
 * pid, same arguments but --reexec=K-1), K times in all: every count K+1
 * times. */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "target_common.h"

static volatile unsigned long sink;
static unsigned long leaf_calls, middle_calls, outer_calls, sleeper_calls;

TRACED void leaf(void) {
  ++leaf_calls;
  sink = sink * 31u + 7u;
}

TRACED void middle(void) {
  ++middle_calls;
  for (int i = 0; i < 3; ++i) {
    leaf();
    TARGET_BARRIER();
  }
}

TRACED void outer(long n) {
  ++outer_calls;
  for (long i = 0; i < n; ++i) {
    middle();
    TARGET_BARRIER();
  }
}

TRACED void sleeper(void) {
  ++sleeper_calls;
  struct timespec ts = {0, 20 * 1000 * 1000};
  /* Restart after a signal so every call sleeps its full 20 ms. */
  while (nanosleep(&ts, &ts) != 0) {
  }
}

/* --reexec=K with K > 0: execs this program again with K-1; returns only
 * when the exec failed. */
static void reexec(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (strncmp(argv[i], "--reexec=", 9) != 0) continue;
    long k = atol(argv[i] + 9);
    if (k <= 0) return;
    char next[32];
    snprintf(next, sizeof next, "--reexec=%ld", k - 1);
    argv[i] = next;
    fflush(stdout);
    execv(argv[0], argv);
    perror("target_c: execv");
    exit(4);
  }
}

int main(int argc, char** argv) {
  target_line_buffered();
  long n = target_count_arg(argc, argv, 0, 100);
  printf("pid=%d\n", (int)getpid());
  outer(n);
  TARGET_BARRIER();
  for (int i = 0; i < 3; ++i) {
    sleeper();
    TARGET_BARRIER();
  }
  printf("leaf=%lu\nmiddle=%lu\nouter=%lu\nsleeper=%lu\n", leaf_calls, middle_calls,
         outer_calls, sleeper_calls);
  reexec(argc, argv);
  return target_exit_code(argc, argv);
}
