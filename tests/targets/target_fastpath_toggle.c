/* target_fastpath_toggle: worker threads under load calling two functions
 * whose first instruction counts the call, for the fast path's switch test
 * (FastPath::set_enabled, tests/integration/test_fastpath_toggle.cpp):
 * patched and unpatched 1,000 times while it runs, the entries recorded in
 * each window must equal the calls counted between the two stops.
 *
 *   target_fastpath_toggle WORKERS          run until SIGUSR1, then print
 *   target_fastpath_toggle --verify N...    the same lines, untraced: one
 *                                           worker per N, N iterations each
 *
 * tg_outer(counts, x) counts itself in counts[0] and calls tg_leaf(counts
 * + 1, ...) twice, which counts itself in counts[1]. Both are written in
 * assembly so that the count is their very first instruction: it is one of
 * the instructions a patch moves into the trampoline, after the entry
 * record, and a stop finds a call either counted and recorded or neither
 * (the test's stops wait until no thread is inside a trampoline). Each
 * worker adds the results into a checksum that depends only on how many
 * iterations it made. The traced calls' own entries and returns (the
 * trampolines and the stub) are a small part of the time.
 *
 * Prints at start:
 *   ready pid=P counters=0xADDR stride=S workers=W tids=T1,T2,...
 * (worker w's counts: two longs at ADDR + w * S). After SIGUSR1, one line
 * per worker:  worker W iterations=N sum=S  */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

long tg_outer(long* counts, long x);
long tg_leaf(long* count, long x);

/* long tg_leaf(long *count, long x): ++*count; (3x + 1) ^ 0x5bd1e995
 * long tg_outer(long *counts, long x):
 *   ++counts[0]; a = tg_leaf(counts + 1, x);
 *   for (i = 20000; i > 0; i--) a = a * 0x2545f491 + i;   (about 30 us)
 *   b = tg_leaf(counts + 1, x + 7);
 *   return a * 31 + b + x
 * Most of the time is spent in tg_outer between its two calls: a stop that
 * switches the functions off nearly always finds some workers there, with
 * a hooked tg_outer frame in flight. */
__asm__(
    "  .text\n"
    "  .globl tg_leaf\n"
    "  .type tg_leaf, @function\n"
    "tg_leaf:\n"
    "  incq (%rdi)\n"
    "  lea 1(%rsi,%rsi,2), %rax\n"
    "  xor $0x5bd1e995, %rax\n"
    "  ret\n"
    "  .size tg_leaf, .-tg_leaf\n"
    "  .globl tg_outer\n"
    "  .type tg_outer, @function\n"
    "tg_outer:\n"
    "  incq (%rdi)\n"
    "  push %rbx\n"
    "  push %r12\n"
    "  push %r13\n"
    "  mov %rdi, %rbx\n"
    "  mov %rsi, %r12\n"
    "  lea 8(%rbx), %rdi\n"
    "  call tg_leaf\n"
    "  mov %rax, %r13\n"
    "  mov $20000, %ecx\n"
    "1:\n"
    "  imul $0x2545f491, %r13, %r13\n"
    "  add %rcx, %r13\n"
    "  dec %ecx\n"
    "  jnz 1b\n"
    "  lea 8(%rbx), %rdi\n"
    "  lea 7(%r12), %rsi\n"
    "  call tg_leaf\n"
    "  imul $31, %r13, %r13\n"
    "  add %r13, %rax\n"
    "  add %r12, %rax\n"
    "  pop %r13\n"
    "  pop %r12\n"
    "  pop %rbx\n"
    "  ret\n"
    "  .size tg_outer, .-tg_outer\n");

#define MAX_WORKERS 16

/* One cache line per worker: its counts and nothing another thread writes. */
struct worker {
  long counts[2]; /* tg_outer's, tg_leaf's */
  long iterations;
  unsigned long sum;
  pid_t tid;
  char pad[64 - 2 * sizeof(long) - sizeof(long) - sizeof(unsigned long) - sizeof(pid_t)];
} __attribute__((aligned(64)));

static struct worker workers[MAX_WORKERS];
static atomic_int stop;
static atomic_int started;

static void on_usr1(int sig) {
  (void)sig;
  atomic_store(&stop, 1);
}

/* One iteration of worker `w`: the same arithmetic traced or not. */
static unsigned long step(struct worker* w, long i, unsigned long sum) {
  /* A little work outside the traced functions too. */
  unsigned long acc = sum;
  for (int k = 0; k < 200; k++) acc = acc * 6364136223846793005ul + (unsigned long)k;
  return acc ^ (unsigned long)tg_outer(w->counts, i);
}

/* --verify: worker w's N iterations, untraced. */
static long verify_iterations[MAX_WORKERS];

static void* verify_worker(void* arg) {
  struct worker* w = arg;
  unsigned long sum = (unsigned long)(w - workers);
  for (long i = 0; i < verify_iterations[w - workers]; i++) sum = step(w, i, sum);
  w->iterations = verify_iterations[w - workers];
  w->sum = sum;
  return NULL;
}

static void* run_worker(void* arg) {
  struct worker* w = arg;
  w->tid = (pid_t)syscall(SYS_gettid);
  atomic_fetch_add(&started, 1);
  unsigned long sum = (unsigned long)(w - workers);
  long i = 0;
  for (; !atomic_load_explicit(&stop, memory_order_relaxed); i++) sum = step(w, i, sum);
  w->iterations = i;
  w->sum = sum;
  return NULL;
}

int main(int argc, char** argv) {
  pthread_t threads[MAX_WORKERS];
  if (argc >= 2 && strcmp(argv[1], "--verify") == 0) {
    int n = 0;
    for (; n + 2 < argc && n < MAX_WORKERS; n++) verify_iterations[n] = atol(argv[n + 2]);
    for (int i = 0; i < n; i++) pthread_create(&threads[i], NULL, verify_worker, &workers[i]);
    for (int i = 0; i < n; i++) pthread_join(threads[i], NULL);
    for (int i = 0; i < n; i++)
      printf("worker %d iterations=%ld sum=%lu\n", i, workers[i].iterations, workers[i].sum);
    return 0;
  }
  int count = argc >= 2 ? atoi(argv[1]) : 4;
  if (count < 1 || count > MAX_WORKERS) {
    fprintf(stderr, "usage: %s WORKERS (1-%d) | --verify N...\n", argv[0], MAX_WORKERS);
    return 2;
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_usr1;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGUSR1, &sa, NULL);
  for (int i = 0; i < count; i++) pthread_create(&threads[i], NULL, run_worker, &workers[i]);
  while (atomic_load(&started) < count) usleep(1000);
  printf("ready pid=%d counters=%p stride=%zu workers=%d tids=", (int)getpid(), (void*)workers,
         sizeof(struct worker), count);
  for (int i = 0; i < count; i++) printf(i ? ",%d" : "%d", (int)workers[i].tid);
  printf("\n");
  fflush(stdout);
  for (int i = 0; i < count; i++) pthread_join(threads[i], NULL);
  for (int i = 0; i < count; i++)
    printf("worker %d iterations=%ld sum=%lu\n", i, workers[i].iterations, workers[i].sum);
  return 0;
}
