/* target_kernel: functions whose kernel-side behaviour is known exactly,
 * for the multi-level (kernel events) tests.
 *
 *   target_kernel [--exit=CODE] [--tag=X]
 *
 * main calls, in this order:
 *   sleeper()          nanosleep 50 ms: blocked off-CPU, almost no CPU
 *   syscall_caller()   calls getppid_1000() and makes no system call itself
 *   getppid_1000()     exactly 1000 getppid system calls (raw syscall(2))
 *   toucher()          maps 1000 fresh anonymous pages and writes one byte to
 *                      each: at least 1000 user page faults
 *   spinner()          50 ms of wall time computing, no system call but the
 *                      two that read its thread CPU time (printed)
 *   start_worker()     a thread named "kt-worker" that calls worker_job()
 *                      exactly 100 times, joined
 *   fork_child()       fork()s a child that calls child_job() exactly 50
 *                      times and _exit(0)s; the parent waits for it and
 *                      never calls child_job() itself
 * and prints what it did, one "key=value" a line. */
#define _GNU_SOURCE /* pthread_setname_np */
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "target_common.h"

#define PAGES 1000
#define SYSCALLS 1000
#define WORKER_JOBS 100
#define CHILD_JOBS 50

static volatile unsigned long sink;
static long getppid_calls, worker_jobs, child_jobs;

TRACED void sleeper(void) {
  struct timespec ts = {0, 50 * 1000 * 1000};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

TRACED void getppid_1000(void) {
  /* syscall(2), not getppid(3): one kernel entry per call, never cached. */
  for (int i = 0; i < SYSCALLS; ++i) {
    sink += (unsigned long)syscall(SYS_getppid);
    ++getppid_calls;
  }
}

TRACED void syscall_caller(void) {
  getppid_1000();
  TARGET_BARRIER();
}

TRACED long toucher(void) {
  long page = sysconf(_SC_PAGESIZE);
  char* p = mmap(NULL, (size_t)(PAGES * page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                 -1, 0);
  if (p == MAP_FAILED) return -1;
  /* One fault per page also where transparent huge pages are always on
   * (Debian's cloud kernels): a huge page would take 512 in one fault. */
  madvise(p, (size_t)(PAGES * page), MADV_NOHUGEPAGE);
  for (long i = 0; i < PAGES; ++i) p[i * page] = (char)i;
  TARGET_BARRIER();
  munmap(p, (size_t)(PAGES * page));
  return PAGES;
}

static long spinner_cpu_ns;

static long ns_of(const struct timespec* t) { return t->tv_sec * 1000000000L + t->tv_nsec; }

/* 50 ms of wall time on the monotonic clock through the vDSO (no system
 * call). It also measures its own thread CPU time (one clock_gettime system
 * call at each end: the thread CPU clock is not in the vDSO), the kernel's
 * account of its on-CPU time, which the report's on-CPU time must match
 * however busy the machine is. */
TRACED void spinner(void) {
  struct timespec start, now, cpu0, cpu1;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu0);
  clock_gettime(CLOCK_MONOTONIC, &start);
  do {
    for (int i = 0; i < 10000; ++i) sink = sink * 31u + (unsigned long)i;
    clock_gettime(CLOCK_MONOTONIC, &now);
  } while (ns_of(&now) - ns_of(&start) < 50000000L);
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu1);
  spinner_cpu_ns = ns_of(&cpu1) - ns_of(&cpu0);
}

TRACED void worker_job(void) {
  ++worker_jobs;
  sink = sink * 7u + 1u;
}

static void* worker_main(void* arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "kt-worker");
  for (int i = 0; i < WORKER_JOBS; ++i) {
    worker_job();
    TARGET_BARRIER();
  }
  return NULL;
}

TRACED int start_worker(void) {
  pthread_t t;
  if (pthread_create(&t, NULL, worker_main, NULL) != 0) return -1;
  return pthread_join(t, NULL);
}

TRACED void child_job(void) {
  ++child_jobs;
  sink = sink * 5u + 3u;
}

TRACED int fork_child(void) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    for (int i = 0; i < CHILD_JOBS; ++i) {
      child_job();
      TARGET_BARRIER();
    }
    _exit(child_jobs == CHILD_JOBS ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int main(int argc, char** argv) {
  target_line_buffered();
  sleeper();
  syscall_caller();
  long pages = toucher();
  spinner();
  int worker = start_worker();
  int child = fork_child();
  printf("sleeper=1\n");
  printf("getppid=%ld\n", getppid_calls);
  printf("pages=%ld\n", pages);
  printf("spinner=1\n");
  printf("spinner_cpu_ns=%ld\n", spinner_cpu_ns);
  printf("worker_job=%ld\n", worker == 0 ? worker_jobs : -1L);
  printf("child_job=%d\n", child == 0 ? CHILD_JOBS : -1);
  printf("parent_child_job=%ld\n", child_jobs);
  return target_exit_code(argc, argv);
}
