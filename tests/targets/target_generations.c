/* target_generations: many detaches while a kept function runs without a
 * pause, for the generation switch of the relevance filters. Each detach
 * rebuilds the link group of the functions left (record/detacher.h): new
 * links, a generation switch, the old links closed. A hit of a kept
 * function that straddles the switch must be recorded exactly once.
 *
 *   target_generations [PHASES] [CALLS] [--tag=X]
 *
 *   h00..h31  short functions; phase i calls h(i) CALLS times (default
 *             200), then sleeps 5 ms so the recorder detaches it (with
 *             --filter-max-calls below CALLS) before the next phase
 *   kept(n)   recurses n levels (1 to 3 by turns) so that an entry or exit
 *             lost at a switch pairs with the wrong activation and shows;
 *             a second thread calls it without pause until the phases end
 *   main      runs PHASES phases (1 to 32, default 32) on the main thread
 *
 * Prints "kept=N" (activations of kept, counted by the program), "h=N"
 * (calls of the h functions), "phases=P". */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "target_common.h"

static atomic_int phases_done;
static unsigned long kept_calls, h_calls;

TRACED unsigned long kept(unsigned long n) {
  ++kept_calls;
  unsigned long r = n * 2654435761u;
  TARGET_BARRIER();
  if (n > 0) r ^= kept(n - 1);
  TARGET_BARRIER();
  return r;
}

#define H(i)                                                \
  TRACED unsigned long h##i(unsigned long x) {              \
    ++h_calls;                                              \
    return x * 6364136223846793005u + (unsigned long)(1##i); \
  }
H(00) H(01) H(02) H(03) H(04) H(05) H(06) H(07)
H(08) H(09) H(10) H(11) H(12) H(13) H(14) H(15)
H(16) H(17) H(18) H(19) H(20) H(21) H(22) H(23)
H(24) H(25) H(26) H(27) H(28) H(29) H(30) H(31)
#undef H

typedef unsigned long (*hfn)(unsigned long);
static const hfn hs[32] = {h00, h01, h02, h03, h04, h05, h06, h07, h08, h09, h10,
                           h11, h12, h13, h14, h15, h16, h17, h18, h19, h20, h21,
                           h22, h23, h24, h25, h26, h27, h28, h29, h30, h31};

static void* spin_kept(void* arg) {
  unsigned long* sum = arg;
  for (unsigned long i = 0; atomic_load(&phases_done) == 0; ++i) *sum += kept(1 + i % 3);
  return NULL;
}

int main(int argc, char** argv) {
  target_line_buffered();
  long phases = target_count_arg(argc, argv, 0, 32);
  long calls = target_count_arg(argc, argv, 1, 200);
  if (phases < 1 || phases > 32) {
    fprintf(stderr, "%s: PHASES must be 1 to 32\n", argv[0]);
    return 2;
  }
  unsigned long kept_sum = 0, h_sum = 0;
  pthread_t spinner;
  if (pthread_create(&spinner, NULL, spin_kept, &kept_sum) != 0) return 1;
  for (long p = 0; p < phases; ++p) {
    for (long c = 0; c < calls; ++c) {
      h_sum += hs[p]((unsigned long)c);
      TARGET_BARRIER();
    }
    struct timespec pause = {0, 5 * 1000 * 1000};
    nanosleep(&pause, NULL);
  }
  atomic_store(&phases_done, 1);
  pthread_join(spinner, NULL);
  printf("kept=%lu\nh=%lu\nphases=%ld\n", kept_calls, h_calls, phases);
  (void)kept_sum;
  (void)h_sum;
  return target_exit_code(argc, argv);
}
