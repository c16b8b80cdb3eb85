/* target_threads: a PIE with threads, in two modes.
 *
 *   target_threads [M] [--exit=CODE] [--tag=X]        (M defaults to 1000)
 *     4 threads "worker0".."worker3", all alive at once (a barrier), each
 *     calls worker_step() exactly M times; main joins them and prints
 *     "worker_step=4M" and "threads=4". main itself never calls worker_step.
 *
 *   target_threads --forever [SECONDS] [--tag=X]       (SECONDS defaults to 60)
 *     calls tick() about every millisecond until SIGTERM or SIGINT or until
 *     SECONDS have passed, then prints "tick=COUNT" and exits 0. For attach
 *     tests: before the loop it prints "pid=P", "tick_addr=0x..." (where the
 *     code of tick() lives in this process, so a test can read its bytes in
 *     /proc/P/mem and see a uprobe come and go) and "ready".
 *
 * stdout is line-buffered so a test sees each line at once. */
#define _GNU_SOURCE /* pthread_setname_np */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "target_common.h"

#define WORKERS 4

static volatile unsigned long sink;
static unsigned long step_calls[WORKERS]; /* one slot per thread: no races */
static volatile unsigned long tick_calls;
static volatile sig_atomic_t stop_requested;
static pthread_barrier_t all_started;
static long steps_per_worker;

TRACED void worker_step(int worker) {
  ++step_calls[worker];
  sink = sink * 13u + (unsigned long)worker;
}

static void* worker_main(void* arg) {
  int id = (int)(intptr_t)arg;
  char name[16];
  snprintf(name, sizeof name, "worker%d", id);
  pthread_setname_np(pthread_self(), name);
  /* All four alive at once: four distinct tids, never a reused one. */
  pthread_barrier_wait(&all_started);
  for (long i = 0; i < steps_per_worker; ++i) {
    worker_step(id);
    TARGET_BARRIER();
  }
  pthread_barrier_wait(&all_started);
  return NULL;
}

static int run_workers(void) {
  pthread_t threads[WORKERS];
  pthread_barrier_init(&all_started, NULL, WORKERS);
  for (int i = 0; i < WORKERS; ++i)
    if (pthread_create(&threads[i], NULL, worker_main, (void*)(intptr_t)i) != 0) {
      fprintf(stderr, "target_threads: pthread_create failed\n");
      return 1;
    }
  for (int i = 0; i < WORKERS; ++i) pthread_join(threads[i], NULL);
  pthread_barrier_destroy(&all_started);
  unsigned long total = 0;
  for (int i = 0; i < WORKERS; ++i) total += step_calls[i];
  printf("worker_step=%lu\nthreads=%d\n", total, WORKERS);
  return 0;
}

TRACED void tick(void) {
  tick_calls = tick_calls + 1;
}

static void on_stop(int sig) {
  (void)sig;
  stop_requested = 1;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int run_forever(double seconds) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_stop;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);

  printf("pid=%d\n", (int)getpid());
  printf("tick_addr=%p\n", (void*)(uintptr_t)&tick);
  printf("ready\n");
  double deadline = now_s() + seconds;
  while (!stop_requested && now_s() < deadline) {
    tick();
    TARGET_BARRIER();
    struct timespec ts = {0, 1000 * 1000};
    nanosleep(&ts, NULL); /* EINTR on a signal: the loop test sees the flag */
  }
  printf("tick=%lu\n", (unsigned long)tick_calls);
  return 0;
}

int main(int argc, char** argv) {
  target_line_buffered();
  int forever = 0;
  for (int i = 1; i < argc; ++i)
    if (strcmp(argv[i], "--forever") == 0) forever = 1;
  if (forever) return run_forever((double)target_count_arg(argc, argv, 0, 60));

  steps_per_worker = target_count_arg(argc, argv, 0, 1000);
  printf("pid=%d\n", (int)getpid());
  int rc = run_workers();
  return rc != 0 ? rc : target_exit_code(argc, argv);
}
