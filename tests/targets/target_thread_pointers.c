/* target_thread_pointers: threads that say who they are, for the fast
 * path's thread pointer map (fastpath/thread_pointers.h, issue 35).
 *
 *   target_thread_pointers [--tag=X]
 *     3 threads one after another (each joined before the next starts, so
 *     glibc gives the next one the same cached stack and TCB), then 2 alive
 *     at once. After joining them, main prints one line per thread:
 *       thread tid=T self=0xP fs=0xF
 *     T its gettid(), P its pthread_self(), F its fs_base
 *     (arch_prctl(ARCH_GET_FS)), and "main tid=T self=0xP fs=0xF" for
 *     itself, then "threads=5". */
#define _GNU_SOURCE
#include <asm/prctl.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "target_common.h"

#define THREADS 5

struct who {
  long tid;
  unsigned long self;
  unsigned long fs;
};

static struct who seen[THREADS];
static pthread_barrier_t together;

static void say_who(struct who* w) {
  w->tid = syscall(SYS_gettid);
  w->self = (unsigned long)pthread_self();
  syscall(SYS_arch_prctl, ARCH_GET_FS, &w->fs);
}

static void* alone(void* arg) {
  say_who(arg);
  return NULL;
}

static void* with_another(void* arg) {
  say_who(arg);
  pthread_barrier_wait(&together); /* both alive at once: two pointers */
  return NULL;
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  struct who me;
  say_who(&me);
  pthread_t t[THREADS];
  for (int i = 0; i < 3; ++i) {
    if (pthread_create(&t[i], NULL, alone, &seen[i]) != 0) return 1;
    pthread_join(t[i], NULL);
  }
  pthread_barrier_init(&together, NULL, 2);
  for (int i = 3; i < THREADS; ++i)
    if (pthread_create(&t[i], NULL, with_another, &seen[i]) != 0) return 1;
  for (int i = 3; i < THREADS; ++i) pthread_join(t[i], NULL);
  printf("main tid=%ld self=0x%lx fs=0x%lx\n", me.tid, me.self, me.fs);
  for (int i = 0; i < THREADS; ++i)
    printf("thread tid=%ld self=0x%lx fs=0x%lx\n", seen[i].tid, seen[i].self, seen[i].fs);
  printf("threads=%d\n", THREADS);
  return target_exit_code(argc, argv);
}
