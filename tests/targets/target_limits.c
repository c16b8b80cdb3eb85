/* Calls past the kernel's limits (issue 29, docs/safety.md), each printing
 * what it measured so a test can hold the report to it:
 *
 *   target_limits recurse DEPTH ROUNDS THREADS
 *       THREADS threads each run ROUNDS descents of recurse(DEPTH): DEPTH+1
 *       nested calls, all returning; the innermost spins 1 ms. Past 64
 *       nested return probes the kernel installs no more: the deeper calls
 *       get none. Prints "descent_max_ns=N" (the longest descent as the
 *       target measured it around the outermost call) and "calls=N".
 *   target_limits sigjump ROUNDS
 *       ROUNDS times: outer() calls inner(), which spins until a 1 ms timer
 *       signal's handler siglongjmps out of both (once inner() is entered); then after() returns
 *       normally. Prints "round_max_ns=N" (the longest round, from before
 *       outer() to after()'s return) and "rounds=N". */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/time.h>
#include <time.h>

#include "target_common.h"

static long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void spin_ns(long long ns) {
  long long end = now_ns() + ns;
  while (now_ns() < end) TARGET_BARRIER();
}

/* ---- recurse ---- */

TRACED long recurse(long n) {
  if (n == 0) {
    spin_ns(1000000);
    return 0;
  }
  long r = recurse(n - 1) + 1;
  TARGET_BARRIER(); /* no tail call */
  return r;
}

static long depth_arg, rounds_arg;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long long descent_max;
static long calls;

static void* descend(void* unused) {
  (void)unused;
  for (long i = 0; i < rounds_arg; ++i) {
    long long t0 = now_ns();
    long r = recurse(depth_arg);
    long long d = now_ns() - t0;
    pthread_mutex_lock(&lock);
    if (d > descent_max) descent_max = d;
    calls += r + 1;
    pthread_mutex_unlock(&lock);
    /* The thread lives far longer than a descent: a call closed at its
     * thread's end would show it. */
    spin_ns(2000000);
  }
  return NULL;
}

static int run_recurse(int argc, char** argv) {
  depth_arg = target_count_arg(argc, argv, 1, 200);
  rounds_arg = target_count_arg(argc, argv, 2, 50);
  long nthreads = target_count_arg(argc, argv, 3, 2);
  pthread_t t[16];
  if (nthreads > 16) nthreads = 16;
  for (long i = 0; i < nthreads; ++i) pthread_create(&t[i], NULL, descend, NULL);
  for (long i = 0; i < nthreads; ++i) pthread_join(t[i], NULL);
  printf("descent_max_ns=%lld\n", descent_max);
  printf("calls=%ld\n", calls);
  return 0;
}

/* ---- sigjump ---- */

static sigjmp_buf landing;
static volatile sig_atomic_t armed;

static void on_alarm(int sig) {
  (void)sig;
  if (armed) {
    armed = 0;
    siglongjmp(landing, 1);
  }
}

static volatile long inner_arg;

TRACED void inner(long x) {
  /* Armed only once both calls are entered (a slow machine, an emulated
   * one, may take longer than the timer to get here); and the loop must
   * not start at the entry: a jump there would be a new hit. */
  inner_arg = x;
  armed = 1;
  for (;;) TARGET_BARRIER(); /* left only by the handler's siglongjmp */
}

TRACED void outer(long x) {
  inner(x);
  TARGET_BARRIER();
}

TRACED long after(long x) {
  TARGET_BARRIER();
  return x + 1;
}

static int run_sigjump(int argc, char** argv) {
  long rounds = target_count_arg(argc, argv, 1, 40);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sigaction(SIGALRM, &sa, NULL);
  long long round_max = 0;
  volatile long done = 0, sum = 0;
  for (volatile long i = 0; i < rounds; ++i) {
    volatile long long t0 = now_ns();
    if (sigsetjmp(landing, 1) == 0) {
      /* Every 1 ms until it lands: the handler jumps once inner() armed it. */
      struct itimerval it = {{0, 1000}, {0, 1000}};
      setitimer(ITIMER_REAL, &it, NULL);
      outer(i);
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    /* The calls left are closed at after()'s entry: the round ends
     * after it. */
    sum += after(i);
    long long d = now_ns() - t0;
    if (d > round_max) round_max = d;
    done++;
  }
  printf("round_max_ns=%lld\n", round_max);
  printf("rounds=%ld sum=%ld\n", (long)done, (long)sum);
  return 0;
}

int main(int argc, char** argv) {
  target_line_buffered();
  const char* mode = argc > 1 ? argv[1] : "";
  int rc = 2;
  if (strcmp(mode, "recurse") == 0) rc = run_recurse(argc, argv);
  else if (strcmp(mode, "sigjump") == 0) rc = run_sigjump(argc, argv);
  else fprintf(stderr, "usage: %s recurse DEPTH ROUNDS THREADS | sigjump ROUNDS\n", argv[0]);
  return rc ? rc : target_exit_code(argc, argv);
}
