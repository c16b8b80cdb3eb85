/* The fast path's safety corpus, project part (issue 35,
 * tests/integration/test_fastpath_corpus.cpp): every way of leaving a
 * function the kernel path's corpus covers (target_safety, target_cold,
 * target_limits), in a program that waits to be attached. It sets itself
 * up, reads a line from stdin (the test attaches atrace meanwhile), runs
 * its work, reads another line (the test ends atrace and checks the code
 * is given back), then exits. Everything it prints is the same on every
 * run, traced or not; counts that depend on timing go to a file.
 *
 *   target_fastpath_corpus vfork        vfork + _exit (3 times), vfork +
 *                                       exec, posix_spawn; step() 3 times
 *   target_fastpath_corpus cold N       scaled() N times, which calls
 *                                       checked(); both have .cold
 *                                       fragments (built with hot/cold
 *                                       splitting), every 100th call
 *                                       runs them
 *   target_fastpath_corpus recurse N    one chain recurse(N)..recurse(0)
 *   target_fastpath_corpus sigjump N    N times: outer() calls inner(),
 *                                       which raises SIGUSR1; the handler
 *                                       calls in_handler() and siglongjmps
 *                                       out of all three; after() returns
 *   target_fastpath_corpus signals N FILE  a SIGALRM every 20 us while
 *                                       8 threads run work() N times in
 *                                       all (leaf() twice each); each
 *                                       signal's handler calls on_tick(),
 *                                       which calls leaf(); the number of
 *                                       signals goes to FILE */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "target_common.h"

extern char** environ;

/* A line from stdin, read with read(2) so that nothing is buffered
 * ahead: the test sees the program blocked in read(0) once it waits. */
static void wait_line(void) {
  char c;
  ssize_t n;
  while ((n = read(0, &c, 1)) == 1 && c != '\n') {
  }
  if (n < 0) {
    perror("read");
    exit(4);
  }
}

TRACED long step(long x) {
  TARGET_BARRIER();
  return x * 3 + 1;
}

/* ---- vfork ---- */

static int run_vfork(void) {
  volatile long total = 0;
  for (int i = 0; i < 3; ++i) {
    pid_t p = vfork();
    if (p == 0) _exit(10 + i);
    int st = 0;
    waitpid(p, &st, 0);
    total += WEXITSTATUS(st) + step(i);
  }
  pid_t p = vfork();
  if (p == 0) {
    execl("/bin/echo", "echo", "vfork-exec ok", (char*)0);
    _exit(127);
  }
  int st = 0;
  waitpid(p, &st, 0);
  const int exec_status = WEXITSTATUS(st);
  char* argv[] = {"echo", "posix_spawn ok", 0};
  pid_t sp;
  int err = posix_spawn(&sp, "/bin/echo", 0, 0, argv, environ);
  if (err == 0) waitpid(sp, &st, 0);
  printf("vfork total=%ld exec=%d spawn=%d/%d\n", (long)total, exec_status, err, WEXITSTATUS(st));
  return 0;
}

/* ---- cold: as target_cold.c; noinline, not TRACED (noipa would keep
 * GCC from splitting) ---- */

static volatile long rare_total;

__attribute__((cold, noinline)) static void rare(long x, const char* why) {
  rare_total += x;
  if (x < 0) fprintf(stderr, "rare %s %ld\n", why, x);
}

__attribute__((noinline)) long checked(long x) {
  long y = x * 7 + 3;
  if (__builtin_expect(x % 100 == 99, 0)) {
    rare(x, "checked");
    y = -y / 3 + rare_total % 11;
    for (int i = 0; i < 3; ++i) y ^= (y << 1) + i;
  }
  return y;
}

__attribute__((noinline)) long scaled(long x) {
  if (__builtin_expect(x > 1000000, 0)) {
    rare(x, "scaled");
    return -1;
  }
  return checked(x) % 1000;
}

static int run_cold(long n) {
  long sum = 0;
  for (long i = 0; i < n; ++i) sum += scaled(i);
  printf("cold sum=%ld rare=%ld\n", sum, (long)rare_total);
  return 0;
}

/* ---- recurse ---- */

TRACED long recurse(long n) {
  if (n == 0) return 0;
  long r = recurse(n - 1) + 1;
  TARGET_BARRIER(); /* no tail call */
  return r;
}

/* ---- sigjump ---- */

static sigjmp_buf landing;

static volatile long handled;

TRACED long in_handler(long x) {
  handled += x; /* long enough for the jump (5 bytes) */
  return x;
}

static void on_usr1(int sig) { siglongjmp(landing, (int)in_handler(sig)); }

TRACED void inner(long x) {
  raise(SIGUSR1);
  fprintf(stderr, "inner(%ld) returned\n", x); /* never */
}

TRACED void outer(long x) {
  inner(x);
  TARGET_BARRIER();
}

TRACED long after(long x) {
  TARGET_BARRIER();
  return x + 1;
}

static int run_sigjump(long rounds) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_usr1;
  sigaction(SIGUSR1, &sa, NULL);
  volatile long landed = 0, sum = 0;
  for (volatile long i = 0; i < rounds; ++i) {
    if (sigsetjmp(landing, 1) == 0) outer(i);
    else landed++;
    sum += after(i);
  }
  printf("sigjump landed=%ld sum=%ld\n", (long)landed, (long)sum);
  return 0;
}

/* ---- signals ---- */

static long ticks, tick_sum; /* atomics: handlers run on several threads */

/* A little work of its own: the signals come inside the calls, and in
 * the code around them. */
TRACED long leaf(long x) {
  for (volatile int k = 0; k < 20; k++) TARGET_BARRIER();
  return x * 3 + 1;
}

TRACED long work(long i) {
  long r = leaf(i) + leaf(i + 1);
  TARGET_BARRIER();
  return r;
}

TRACED void on_tick(void) {
  __atomic_fetch_add(&tick_sum, leaf(__atomic_load_n(&ticks, __ATOMIC_RELAXED)), __ATOMIC_RELAXED);
}

static void on_alarm(int sig) {
  (void)sig;
  __atomic_fetch_add(&ticks, 1, __ATOMIC_RELAXED);
  on_tick();
}

#define SIGNAL_THREADS 8
static long per_thread;

/* A new thread's first patched call claims its slot of the fast path's
 * thread table: with signals coming, a handler on the same thread may
 * claim it first (the race fixed in fastpath/trampoline_template.cpp). */
static void* signal_worker(void* arg) {
  sigset_t alrm;
  sigemptyset(&alrm);
  sigaddset(&alrm, SIGALRM);
  pthread_sigmask(SIG_UNBLOCK, &alrm, NULL);
  long sum = 0, first = (long)arg * per_thread;
  for (long i = first; i < first + per_thread; ++i) sum += work(i);
  return (void*)sum;
}

static int run_signals(long n, const char* count_file) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGALRM, &sa, NULL);
  /* The workers take the signals: the main thread blocks them while it
   * waits, and gets those still pending once it unblocks them. */
  sigset_t alrm;
  sigemptyset(&alrm);
  sigaddset(&alrm, SIGALRM);
  pthread_sigmask(SIG_BLOCK, &alrm, NULL);
  per_thread = n / SIGNAL_THREADS;
  struct itimerval it = {{0, 20}, {0, 20}};
  setitimer(ITIMER_REAL, &it, NULL);
  pthread_t t[SIGNAL_THREADS];
  for (long i = 0; i < SIGNAL_THREADS; ++i) pthread_create(&t[i], NULL, signal_worker, (void*)i);
  long sum = 0;
  for (long i = 0; i < SIGNAL_THREADS; ++i) {
    void* r;
    pthread_join(t[i], &r);
    sum += (long)r;
  }
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  pthread_sigmask(SIG_UNBLOCK, &alrm, NULL);
  printf("signals sum=%ld\n", sum);
  FILE* f = fopen(count_file, "w");
  if (!f) {
    perror(count_file);
    return 5;
  }
  fprintf(f, "%ld\n", __atomic_load_n(&ticks, __ATOMIC_RELAXED));
  fclose(f);
  return 0;
}

int main(int argc, char** argv) {
  target_line_buffered();
  const char* mode = argc > 1 ? argv[1] : "";
  const long n = target_count_arg(argc, argv, 1, 1000);
  wait_line();
  int rc = 2;
  if (strcmp(mode, "vfork") == 0) rc = run_vfork();
  else if (strcmp(mode, "cold") == 0) rc = run_cold(n);
  else if (strcmp(mode, "recurse") == 0) printf("depth=%ld\n", recurse(n)), rc = 0;
  else if (strcmp(mode, "sigjump") == 0) rc = run_sigjump(n);
  else if (strcmp(mode, "signals") == 0 && argc > 3) rc = run_signals(n, argv[3]);
  else fprintf(stderr, "usage: %s vfork|cold N|recurse N|sigjump N|signals N FILE\n", argv[0]);
  fflush(stdout);
  wait_line();
  return rc;
}
