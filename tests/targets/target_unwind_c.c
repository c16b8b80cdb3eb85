/* Forced unwinds in a C program (issue 14): a thread calls pthread_exit 4
 * traced frames deep, another is cancelled 3 traced frames deep. glibc
 * loads libgcc_s.so.1 only then (the program does not link it), so its
 * unwinder must be probed before it is mapped.
 *
 *   target_unwind_c     prints "exit_level calls=4 unwound=4" and
 *                       "cancel_level calls=3 unwound=3" */
#include <pthread.h>
#include <unistd.h>

#include "target_common.h"

static volatile long exit_calls, cancel_calls;
static volatile int reached, stop;

TRACED int exit_level(int n) {
  exit_calls = exit_calls + 1;
  if (n < 0) return 0; /* never: a way out for the compiler's recursion check */
  if (n == 0) pthread_exit((void*)7);
  int v = exit_level(n - 1) + 1;
  TARGET_BARRIER();
  return v;
}

TRACED int cancel_level(int n) {
  cancel_calls = cancel_calls + 1;
  if (n == 0) {
    reached = 1;
    while (!stop) pause(); /* a cancellation point */
    return 0;
  }
  int v = cancel_level(n - 1) + 1;
  TARGET_BARRIER();
  return v;
}

static void* exiting(void* arg) {
  (void)arg;
  exit_level(3);
  return NULL;
}

static void* cancelled(void* arg) {
  (void)arg;
  cancel_level(2);
  return NULL;
}

int main(int argc, char** argv) {
  pthread_t t;
  void* ret = NULL;
  target_line_buffered();
  if (pthread_create(&t, NULL, exiting, NULL) != 0) return 1;
  pthread_join(t, &ret);
  printf("exited with %ld\n", (long)ret);
  if (pthread_create(&t, NULL, cancelled, NULL) != 0) return 1;
  while (!reached) usleep(1000);
  pthread_cancel(t);
  pthread_join(t, &ret);
  printf("cancelled: %s\n", ret == PTHREAD_CANCELED ? "yes" : "no");
  /* Every call of both ended by the unwind. */
  printf("exit_level calls=%ld unwound=%ld\n", exit_calls, exit_calls);
  printf("cancel_level calls=%ld unwound=%ld\n", cancel_calls, cancel_calls);
  return target_exit_code(argc, argv);
}
