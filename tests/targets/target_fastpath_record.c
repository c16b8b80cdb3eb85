// target_fastpath_record: a workload of known calls for `record -p PID
// --fast-path` (tests/integration/test_fastpath_record.cpp). It waits until
// its own work() starts with a jump (0xe9: atrace patched it), then runs:
//   work(i)        20,000 calls, 10,000 on each of two threads; each calls
//   leaf(x)        twice: 40,000 calls
//   recurse(n)     one chain 2,001 deep (2000..0: past the shadow stack's 1,024)
//   jump_loop()    once: 100 chains of
//   jumper(d)      3 deep, each left by longjmp: 300 calls
// prints what it computed (the same with or without atrace), tells the test
// it is done by creating the file argv[1]/done, and waits until work()'s
// first byte is back (atrace gave the code back), then exits 0.
// With argv[1] = "-" it runs at once and exits (the untraced reference).
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) long leaf(long x) {
  __asm__ volatile("");
  return x * 3 + 1;
}
__attribute__((noinline)) long work(long i) { return leaf(i) + leaf(i + 1); }
__attribute__((noinline)) long recurse(long n) {
  __asm__ volatile("");
  return n == 0 ? 0 : 1 + recurse(n - 1);
}
static jmp_buf jump_back;
__attribute__((noinline)) void jumper(int depth) {
  __asm__ volatile("");
  if (depth <= 0) return;
  if (depth == 1) longjmp(jump_back, 1);
  jumper(depth - 1);
  __asm__ volatile("");  // not a tail call
}

// The longjmps happen inside a traced call: its return (through the fast
// path's return stub) is where the frames they left are found gone.
__attribute__((noinline)) int jump_loop(void) {
  volatile int jumps = 0;
  for (volatile int i = 0; i < 100; i++) {
    if (setjmp(jump_back) == 0) jumper(3);
    else jumps++;
  }
  return jumps;
}

static void* thread_work(void* arg) {
  long sum = 0;
  for (long i = 0; i < 10000; i++) sum += work(i);
  *(long*)arg = sum;
  return NULL;
}

static int patched(void) { return *(volatile unsigned char*)(void*)work == 0xe9; }

static void wait_for(int want, const char* what) {
  for (int i = 0; i < 4000; i++) {  // 20 s
    if (patched() == want) return;
    struct timespec ts = {0, 5 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  fprintf(stderr, "target_fastpath_record: %s never came\n", what);
  exit(3);
}

int main(int argc, char** argv) {
  const int reference = argc < 2 || strcmp(argv[1], "-") == 0;
  const unsigned char first = *(volatile unsigned char*)(void*)work;
  if (!reference) wait_for(1, "the patch");
  long a = 0, b = 0;
  pthread_t t;
  pthread_create(&t, NULL, thread_work, &b);
  thread_work(&a);
  pthread_join(t, NULL);
  long depth = recurse(2000);
  int jumps = jump_loop();
  printf("sums %ld %ld depth %ld jumps %d\n", a, b, depth, jumps);
  fflush(stdout);
  if (reference) return 0;
  char done[4096];
  snprintf(done, sizeof done, "%s/done", argv[1]);
  fclose(fopen(done, "w"));
  wait_for(0, "the code given back");
  printf("restored %s\n", *(volatile unsigned char*)(void*)work == first ? "same" : "different");
  return 0;
}
