/* target_filter: a tiny hot function and a slow one, for the relevance
 * filters (issue 5): the hot one is what a filter must detach, the slow one
 * what it must keep.
 *
 *   target_filter [SLOW [HOT]] [--threads=T] [--recurse=DEPTH] [--work=K]
 *                 [--time] [--exit=CODE] [--tag=X]
 *
 *   hot(x)    a few arithmetic operations (a few ns untraced)
 *   slow(i)   about 1 ms of fixed arithmetic (K loop iterations, default
 *             800000), calling hot() HOT times (default 1000) on the way
 *   main      calls slow() SLOW times (default 300)
 *
 *   --threads=T      T threads (1 to 16, default 1) do that at once, each
 *                    SLOW times; they all start together (a barrier).
 *                    With T = 1 main does it itself, on the main thread.
 *   --recurse=DEPTH  each of the SLOW iterations calls deep(DEPTH) instead
 *                    of slow(): deep(n) calls hot() once and then deep(n-1),
 *                    down to deep(0), so DEPTH + 1 activations of deep and
 *                    as many calls of hot() per iteration. Nearly all of the
 *                    run is spent inside the recursion, so a function
 *                    detached at any moment is detached in the middle of it.
 *                    Keep DEPTH under 60: the kernel sets no return probe
 *                    on a thread that already has 64 pending (the calls
 *                    deeper than that would have no exit).
 *   --work=K         loop iterations of slow() (0: no work besides hot())
 *   --time           also prints "wall_ns=" (from the start to the end of the
 *                    work, all threads) and "cpu_ns=" (CPU time of the whole
 *                    process over the same span): for bench/filter_overhead.sh
 *
 * Prints, one "key=value" a line, counted by the program itself:
 *   hot=N slow=N deep=N threads=T checksum=HEX
 * The checksum depends only on the arguments (not on timing nor thread
 * order), so the output is the same traced or not; --time adds the two
 * timing lines after them. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include "target_common.h"

#define MAX_THREADS 16

struct worker {
  int id;
  pthread_t thread;
  unsigned long hot_calls, slow_calls, deep_calls;
  unsigned long sum;
};

static long slow_per_thread = 300, hot_per_slow = 1000, work_per_slow = 800000;
static long recurse_depth = -1; /* -1: slow() mode */
static int nthreads = 1;
static pthread_barrier_t start_together;

/* The hot function: a few arithmetic operations, well under a microsecond.
 * Counts through its caller's worker (no shared counter, no race). */
TRACED unsigned long hot(struct worker* w, unsigned long x) {
  /* A stack slot (volatile: it stays one) gives hot() a frame, so with the
   * frame pointer it starts with push %rbp, an emulated uprobe: without it
   * GCC starts with the mov of the constant, which the kernel single-steps. */
  volatile unsigned long v = x;
  ++w->hot_calls;
  return (v * 2654435761u) ^ (x >> 7);
}

/* About 1 ms of work with a fixed number of operations (never timed by the
 * clock: tracing must not change what it computes), calling hot() HOT times
 * spread over it. */
TRACED unsigned long slow(struct worker* w, unsigned long seed) {
  ++w->slow_calls;
  unsigned long acc = seed;
  long every = hot_per_slow > 0 ? work_per_slow / hot_per_slow : 0;
  long done = 0;
  for (long h = 0; h < hot_per_slow; ++h) {
    acc += hot(w, acc + (unsigned long)h);
    TARGET_BARRIER();
    for (long i = 0; i < every; ++i, ++done) acc = acc * 6364136223846793005u + (unsigned long)i;
  }
  for (; done < work_per_slow; ++done) acc = acc * 6364136223846793005u + (unsigned long)done;
  return acc;
}

TRACED unsigned long deep(struct worker* w, long n) {
  ++w->deep_calls;
  unsigned long r = hot(w, (unsigned long)n);
  TARGET_BARRIER();
  if (n > 0) r += deep(w, n - 1);
  TARGET_BARRIER();
  return r;
}

static void work(struct worker* w) {
  for (long i = 0; i < slow_per_thread; ++i) {
    if (recurse_depth >= 0)
      w->sum += deep(w, recurse_depth);
    else
      w->sum += slow(w, (unsigned long)i * 1000003u + (unsigned long)w->id);
    TARGET_BARRIER();
  }
}

static void* worker_main(void* arg) {
  struct worker* w = arg;
  pthread_barrier_wait(&start_together);
  work(w);
  return NULL;
}

static long option_value(int argc, char** argv, const char* name, long fallback) {
  size_t len = strlen(name);
  for (int i = 1; i < argc; ++i)
    if (strncmp(argv[i], name, len) == 0 && argv[i][len] == '=') {
      char* end = NULL;
      long v = strtol(argv[i] + len + 1, &end, 10);
      if (end == argv[i] + len + 1 || *end != '\0' || v < 0) {
        fprintf(stderr, "%s: bad value in '%s'\n", argv[0], argv[i]);
        exit(2);
      }
      return v;
    }
  return fallback;
}

static int has_flag(int argc, char** argv, const char* name) {
  for (int i = 1; i < argc; ++i)
    if (strcmp(argv[i], name) == 0) return 1;
  return 0;
}

static long ns_of(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

int main(int argc, char** argv) {
  target_line_buffered();
  slow_per_thread = target_count_arg(argc, argv, 0, 300);
  hot_per_slow = target_count_arg(argc, argv, 1, 1000);
  nthreads = (int)option_value(argc, argv, "--threads", 1);
  recurse_depth = option_value(argc, argv, "--recurse", -1);
  work_per_slow = option_value(argc, argv, "--work", 800000);
  if (nthreads < 1 || nthreads > MAX_THREADS) {
    fprintf(stderr, "%s: --threads must be 1 to %d\n", argv[0], MAX_THREADS);
    return 2;
  }

  static struct worker workers[MAX_THREADS];
  for (int i = 0; i < nthreads; ++i) workers[i].id = i;
  long wall0 = 0, cpu0 = 0;
  if (nthreads == 1) {
    wall0 = ns_of(CLOCK_MONOTONIC);
    cpu0 = ns_of(CLOCK_PROCESS_CPUTIME_ID);
    work(&workers[0]);
  } else {
    pthread_barrier_init(&start_together, NULL, (unsigned)nthreads + 1);
    for (int i = 0; i < nthreads; ++i)
      if (pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]) != 0) {
        fprintf(stderr, "%s: pthread_create failed\n", argv[0]);
        return 1;
      }
    wall0 = ns_of(CLOCK_MONOTONIC);
    cpu0 = ns_of(CLOCK_PROCESS_CPUTIME_ID);
    pthread_barrier_wait(&start_together);
    for (int i = 0; i < nthreads; ++i) pthread_join(workers[i].thread, NULL);
    pthread_barrier_destroy(&start_together);
  }
  long wall = ns_of(CLOCK_MONOTONIC) - wall0;
  long cpu = ns_of(CLOCK_PROCESS_CPUTIME_ID) - cpu0;

  unsigned long hot_calls = 0, slow_calls = 0, deep_calls = 0, checksum = 0;
  for (int i = 0; i < nthreads; ++i) {
    hot_calls += workers[i].hot_calls;
    slow_calls += workers[i].slow_calls;
    deep_calls += workers[i].deep_calls;
    checksum += workers[i].sum; /* a sum: independent of thread order */
  }
  printf("hot=%lu\nslow=%lu\ndeep=%lu\nthreads=%d\nchecksum=%016lx\n", hot_calls, slow_calls,
         deep_calls, nthreads, checksum);
  if (has_flag(argc, argv, "--time")) printf("wall_ns=%ld\ncpu_ns=%ld\n", wall, cpu);
  return target_exit_code(argc, argv);
}
