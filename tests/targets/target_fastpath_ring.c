// target_fastpath_ring: known calls for the fast path's shared ring
// (tests/integration/test_fastpath_ring.cpp). `target MODE DIR` waits until
// its own count() starts with a jump (0xe9: atrace patched it) and the file
// DIR/go exists (atrace records: the test saw it say so), then
//   exit   calls count() 200,000 times and exits at once: most records are
//          still in the ring when the process is gone;
//   fork   calls count() 1,000 times, then forker() once, which forks inside
//          itself: the child returns from forker() (hooked: through its own
//          copy of the shadow stack), calls count() 5,000 times and
//          outer() 100 times (each calls count() once), prints its sum and
//          exits; the parent waits for it, calls count() 1,000 times more,
//          prints its sum and exits.
// With "-" as the second argument it runs at once (the untraced reference).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) long count(long x) {
  __asm__ volatile("");
  return x * 3 + 1;
}
__attribute__((noinline)) long outer(long x) { return count(x) + 1; }
__attribute__((noinline)) pid_t forker(void) {
  pid_t p = fork();
  __asm__ volatile("");
  return p;
}

static void wait_for_patch(const char* dir) {
  char go[4096];
  snprintf(go, sizeof go, "%s/go", dir);
  for (int i = 0; i < 24000; i++) {  // 120 s: atrace may start slowly on a loaded machine
    if (*(volatile unsigned char*)(void*)count == 0xe9 && access(go, F_OK) == 0) return;
    struct timespec ts = {0, 5 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  fprintf(stderr, "target_fastpath_ring: the patch or DIR/go never came\n");
  exit(3);
}

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  if (strcmp(argv[2], "-") != 0) wait_for_patch(argv[2]);
  long sum = 0;
  if (strcmp(argv[1], "exit") == 0) {
    for (long i = 0; i < 200000; i++) sum += count(i);
    printf("sum %ld\n", sum);
    return 0;
  }
  for (long i = 0; i < 1000; i++) sum += count(i);
  fflush(stdout);
  const pid_t child = forker();
  if (child < 0) return 4;
  if (child == 0) {
    long c = 0;
    for (long i = 0; i < 5000; i++) c += count(i);
    for (long i = 0; i < 100; i++) c += outer(i);
    printf("child %ld\n", c);
    fflush(stdout);
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  for (long i = 0; i < 1000; i++) sum += count(i);
  printf("parent %ld child %s\n", sum,
         WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "ok" : "failed");
  return 0;
}
