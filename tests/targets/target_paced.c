/* target_paced: exact call counts spread evenly over a known time, for
 * long recordings (record --rotate, tests/integration/test_rotation_long.cpp).
 *
 *   target_paced [SECONDS] [--exit=CODE] [--tag=X]   (SECONDS defaults to 60)
 *
 *   paced_run()    1              the whole run: SECONDS by its own clock
 *   paced_tick()   10*SECONDS     one every 100 ms, called from paced_run()
 *   paced_work()   100*SECONDS    10 per tick
 *   paced_leaf()   300*SECONDS    3 per paced_work()
 *   paced_nap()    10*SECONDS     after each tick, sleeps to the tick's end
 *
 * The ticks keep an absolute schedule (the k-th nap ends at start +
 * k * 100 ms, CLOCK_MONOTONIC): a late wake-up shortens the next nap
 * instead of shifting every later tick, so paced_run() lasts SECONDS plus
 * one wake-up's latency, and paced_tick() + paced_nap() together cover
 * the run but for the loop's own instructions, in every run alike.
 *
 * Prints "pid=P" first, then one "name=count" line per function, counted by
 * the program itself. */
#include <errno.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "target_common.h"

#define TICK_NS 100000000LL

static volatile unsigned long sink;
static unsigned long run_calls, tick_calls, work_calls, leaf_calls, nap_calls;

TRACED void paced_leaf(void) {
  ++leaf_calls;
  sink = sink * 31u + 7u;
}

TRACED void paced_work(void) {
  ++work_calls;
  for (int i = 0; i < 3; ++i) {
    paced_leaf();
    TARGET_BARRIER();
  }
}

TRACED void paced_tick(void) {
  ++tick_calls;
  for (int i = 0; i < 10; ++i) {
    paced_work();
    TARGET_BARRIER();
  }
}

/* Sleeps until `deadline` (CLOCK_MONOTONIC), through signals. */
TRACED void paced_nap(const struct timespec* deadline) {
  ++nap_calls;
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, deadline, NULL) == EINTR) {
  }
}

TRACED void paced_run(long seconds) {
  ++run_calls;
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  const int64_t t0 = (int64_t)start.tv_sec * 1000000000LL + start.tv_nsec;
  for (long k = 1; k <= seconds * 10; ++k) {
    paced_tick();
    TARGET_BARRIER();
    const int64_t t = t0 + k * TICK_NS;
    const struct timespec deadline = {(time_t)(t / 1000000000LL), (long)(t % 1000000000LL)};
    paced_nap(&deadline);
    TARGET_BARRIER();
  }
}

int main(int argc, char** argv) {
  target_line_buffered();
  long seconds = target_count_arg(argc, argv, 0, 60);
  printf("pid=%d\n", (int)getpid());
  paced_run(seconds);
  TARGET_BARRIER();
  printf("paced_run=%lu\npaced_tick=%lu\npaced_work=%lu\npaced_leaf=%lu\npaced_nap=%lu\n",
         run_calls, tick_calls, work_calls, leaf_calls, nap_calls);
  return target_exit_code(argc, argv);
}
