/* target_c: a non-PIE C program with exact, argv-given call counts.
 *
 *   target_c [N] [--exit=CODE] [--tag=X]        (N defaults to 100)
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
 * the program itself. */
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
  return target_exit_code(argc, argv);
}
