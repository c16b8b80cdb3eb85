// A C program that does not link libgcc_s.so.1: glibc loads it at the
// first backtrace() or pthread_exit, after the fast path's install, so its
// unwinder is not patched (docs/fast-path.md, "Unwinders";
// tests/integration/test_fastpath_late_unwinder.cpp).
//
//   target_fastpath_late_unwinder backtrace N TAG   bt_outer -> bt_mid ->
//       bt_leaf -> backtrace(), N times: prints the frames found each time
//   target_fastpath_late_unwinder exit N TAG        N threads, each
//       ex_outer -> ex_inner -> pthread_exit(7), then N more cancelled
//       in ex_inner
// First prints whether libgcc_s.so.1 is mapped before the work.
#include <execinfo.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile int sink;

static int libgcc_mapped(void) {
  FILE* f = fopen("/proc/self/maps", "r");
  char line[512];
  int found = 0;
  while (f && fgets(line, sizeof line, f))
    if (strstr(line, "libgcc_s")) found = 1;
  if (f) fclose(f);
  return found;
}

__attribute__((noinline)) int bt_leaf(void) {
  void* frames[64];
  return backtrace(frames, 64);
}
__attribute__((noinline)) int bt_mid(void) { return bt_leaf() + sink; }
__attribute__((noinline)) int bt_outer(void) { return bt_mid() + sink; }

__attribute__((noinline)) void ex_inner(long how) {
  if (how == 0) pthread_exit((void*)7);
  for (;;) {
    sink++;
    pthread_testcancel();
    usleep(100);
  }
}
__attribute__((noinline)) void ex_outer(long how) {
  ex_inner(how);
  sink++;
}
static void* thread_main(void* how) {
  ex_outer((long)how);
  return NULL;
}

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  const int n = atoi(argv[2]);
  printf("libgcc_s mapped at start: %s\n", libgcc_mapped() ? "yes" : "no");
  if (strcmp(argv[1], "backtrace") == 0) {
    for (int i = 0; i < n; i++) printf("frames %d\n", bt_outer());
  } else if (strcmp(argv[1], "exit") == 0) {
    for (int i = 0; i < n; i++) {
      pthread_t t;
      void* r;
      pthread_create(&t, NULL, thread_main, (void*)0);
      pthread_join(t, &r);
      printf("exited %ld\n", (long)r);
    }
    for (int i = 0; i < n; i++) {
      pthread_t t;
      void* r;
      pthread_create(&t, NULL, thread_main, (void*)1);
      usleep(1000);
      pthread_cancel(t);
      pthread_join(t, &r);
      printf("cancelled %d\n", r == PTHREAD_CANCELED);
    }
  } else {
    return 2;
  }
  return 0;
}
