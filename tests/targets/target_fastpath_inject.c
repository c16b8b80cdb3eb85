/* target_fastpath_inject: a multi-threaded program for the fast path's
 * injection tests (fastpath/inject/, tests/integration/test_fastpath_inject.cpp).
 *
 *   target_fastpath_inject FIFO [WORKERS] [SLEEP_MS]
 *
 * WORKERS threads (default 3) call answer(), which returns 7, in a loop and
 * count each result per epoch; a reader thread is blocked in read() on the
 * FIFO (opened read-write, so it never sees EOF) and answers the commands
 * written to it; a sleeper thread sleeps SLEEP_MS (default 1500) at a time
 * with nanosleep and prints how long each sleep really took; an epoller
 * thread waits in epoll_wait, with no timeout, for a pipe nobody writes
 * (a stop must not make it fail with EINTR: it would print "epoll_wait
 * returned ret=R errno=E" and exit 4); the main thread waits in
 * pthread_join. SIGUSR1 and SIGRTMIN (which the kernel
 * queues, one per sigqueue) are counted by their handlers (SA_RESTART: the
 * reader's read() restarts; the sleeper blocks both).
 *
 * Prints at start:
 *   ready pid=P answer=0xADDR reader=TID sleeper=TID main=TID epoller=TID
 * Commands (one a line on the FIFO):
 *   epoch   start a new epoch: the workers count the calls they start from
 *           now on separately; prints "epoch N"
 *   report  prints "report epoch=N threads=W calls=C sevens=S fortytwos=F
 *           others=O busy=B usr1=U" for the current epoch (B: workers with at
 *           least one call in it)
 *   churn   starts a thread that keeps creating short-lived threads (each
 *           calls answer() once and ends); prints "churning"
 *   quit    exits 0
 * Each sleep prints "slept ms=M ret=R errno=E". */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "target_common.h"

#define MAX_WORKERS 64
#define EPOCHS 64

TRACED int answer(void) { return 7; }

/* No separate call count: a report reads the counters while the workers
 * run, and calls = sevens + fortytwos + others holds exactly. */
struct counts {
  _Atomic unsigned long sevens, fortytwos, others;
};
static struct counts counts[MAX_WORKERS][EPOCHS];
static _Atomic unsigned epoch;
static volatile sig_atomic_t usr1;
static _Atomic unsigned long rt_signals; /* SIGRTMIN: queued, never merged */
static _Atomic unsigned long churned;
static int workers = 3;
static long sleep_ms = 1500;
static int fifo = -1;

static void on_usr1(int sig) {
  (void)sig;
  usr1 = usr1 + 1;
}

static void on_rt(int sig) {
  (void)sig;
  atomic_fetch_add(&rt_signals, 1);
}

static void* worker(void* arg) {
  int me = (int)(intptr_t)arg;
  for (;;) {
    /* The epoch is read before the call: a call counted in epoch N started
     * after the command that began it. */
    unsigned e = atomic_load(&epoch) % EPOCHS;
    int r = answer();
    TARGET_BARRIER();
    struct counts* c = &counts[me][e];
    if (r == 7)
      atomic_fetch_add(&c->sevens, 1);
    else if (r == 42)
      atomic_fetch_add(&c->fortytwos, 1);
    else
      atomic_fetch_add(&c->others, 1);
  }
  return NULL;
}

static void* sleeper(void* arg) {
  (void)arg;
  sigset_t usr;
  sigemptyset(&usr);
  sigaddset(&usr, SIGUSR1);
  sigaddset(&usr, SIGRTMIN);
  pthread_sigmask(SIG_BLOCK, &usr, NULL);
  for (;;) {
    struct timespec t0, t1, d = {sleep_ms / 1000, (sleep_ms % 1000) * 1000000L};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    errno = 0;
    int r = nanosleep(&d, NULL);
    int err = errno;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
    printf("slept ms=%ld ret=%d errno=%d\n", ms, r, err);
    fflush(stdout);
  }
  return NULL;
}

static void report(void) {
  unsigned e = atomic_load(&epoch) % EPOCHS;
  unsigned long calls = 0, sevens = 0, fortytwos = 0, others = 0;
  int busy = 0;
  for (int i = 0; i < workers; ++i) {
    struct counts* c = &counts[i][e];
    unsigned long s = atomic_load(&c->sevens), f = atomic_load(&c->fortytwos),
                  o = atomic_load(&c->others);
    calls += s + f + o;
    busy += s + f + o > 0;
    sevens += s;
    fortytwos += f;
    others += o;
  }
  printf(
      "report epoch=%u threads=%d calls=%lu sevens=%lu fortytwos=%lu others=%lu busy=%d usr1=%d "
      "churned=%lu rt=%lu\n",
      atomic_load(&epoch), workers, calls, sevens, fortytwos, others, busy, (int)usr1,
      atomic_load(&churned), atomic_load(&rt_signals));
  fflush(stdout);
}

static void* short_lived(void* arg) {
  (void)arg;
  answer();
  return NULL;
}

static void* churn(void* arg) {
  (void)arg;
  for (;;) {
    pthread_t t;
    if (pthread_create(&t, NULL, short_lived, NULL) == 0) pthread_join(t, NULL);
    atomic_fetch_add(&churned, 1);
  }
  return NULL;
}

static void* reader(void* arg) {
  (void)arg;
  char line[256];
  size_t have = 0;
  for (;;) {
    ssize_t n = read(fifo, line + have, sizeof line - 1 - have);
    if (n < 0) {
      printf("read failed errno=%d\n", errno); /* EINTR would mean a broken restart */
      fflush(stdout);
      exit(3);
    }
    have += (size_t)n;
    line[have] = 0;
    char* nl;
    while ((nl = strchr(line, '\n')) != NULL) {
      *nl = 0;
      if (strcmp(line, "epoch") == 0) {
        unsigned e = atomic_load(&epoch) + 1;
        for (int i = 0; i < workers; ++i) memset(&counts[i][e % EPOCHS], 0, sizeof counts[i][0]);
        atomic_store(&epoch, e);
        printf("epoch %u\n", e);
        fflush(stdout);
      } else if (strcmp(line, "report") == 0) {
        report();
      } else if (strcmp(line, "churn") == 0) {
        pthread_t t;
        pthread_create(&t, NULL, churn, NULL);
        printf("churning\n");
        fflush(stdout);
      } else if (strcmp(line, "quit") == 0) {
        exit(0);
      }
      size_t used = (size_t)(nl + 1 - line);
      memmove(line, nl + 1, have - used + 1);
      have -= used;
    }
  }
  return NULL;
}

static void start(pthread_t* t, void* (*fn)(void*), void* arg) {
  if (pthread_create(t, NULL, fn, arg) != 0) exit(2);
}

static _Atomic pid_t reader_tid, sleeper_tid, epoller_tid;

static void* epoller_main(void* arg) {
  (void)arg;
  /* No signal reaches it: only a stop could make its epoll_wait return. */
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, NULL);
  int never[2];
  int ep = epoll_create1(0);
  struct epoll_event ev;
  memset(&ev, 0, sizeof ev);
  ev.events = EPOLLIN;
  if (pipe(never) || ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, never[0], &ev)) exit(2);
  atomic_store(&epoller_tid, (pid_t)syscall(SYS_gettid));
  int n = epoll_wait(ep, &ev, 1, -1);
  printf("epoll_wait returned ret=%d errno=%d\n", n, n < 0 ? errno : 0);
  fflush(stdout);
  exit(4);
}

static void* reader_main(void* arg) {
  atomic_store(&reader_tid, (pid_t)syscall(SYS_gettid));
  return reader(arg);
}

static void* sleeper_main(void* arg) {
  atomic_store(&sleeper_tid, (pid_t)syscall(SYS_gettid));
  return sleeper(arg);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s FIFO [WORKERS] [SLEEP_MS]\n", argv[0]);
    return 2;
  }
  if (argc > 2) workers = atoi(argv[2]);
  if (argc > 3) sleep_ms = atol(argv[3]);
  if (workers < 1 || workers > MAX_WORKERS) return 2;
  fifo = open(argv[1], O_RDWR | O_CLOEXEC);
  if (fifo < 0) {
    perror(argv[1]);
    return 2;
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_usr1;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGUSR1, &sa, NULL);
  sa.sa_handler = on_rt;
  sigaction(SIGRTMIN, &sa, NULL);

  pthread_t t[MAX_WORKERS + 3];
  start(&t[0], reader_main, NULL);
  start(&t[1], sleeper_main, NULL);
  start(&t[2], epoller_main, NULL);
  for (int i = 0; i < workers; ++i) start(&t[3 + i], worker, (void*)(intptr_t)i);
  while (atomic_load(&reader_tid) == 0 || atomic_load(&sleeper_tid) == 0 ||
         atomic_load(&epoller_tid) == 0)
    usleep(1000);
  printf("ready pid=%d answer=%p reader=%d sleeper=%d main=%d epoller=%d\n", getpid(),
         (void*)answer, (int)atomic_load(&reader_tid), (int)atomic_load(&sleeper_tid), getpid(),
         (int)atomic_load(&epoller_tid));
  fflush(stdout);
  pthread_join(t[0], NULL);
  return 0;
}
