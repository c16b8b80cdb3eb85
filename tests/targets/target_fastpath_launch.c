// target_fastpath_launch: a workload of known calls for `record --fast-path
// -- CMD` (launch mode, tests/integration/test_fastpath_launch.c):
//   init()       the program's own constructor, run after the entry point
//                (by __libc_start_main): 7 calls of work()
//   work(i)      3,000 calls on the main thread, 2,000 on a second one;
//                each calls
//   leaf(x)      twice
//   shared_fn(x) of libtarget_shared.so: 1,500 calls (a library's function,
//                patched at the entry point, once ld.so has mapped it)
// prints what it computed (the same with or without atrace), then, given a
// directory, tells the test it is done by creating DIR/done and waits until
// work()'s first byte is back (atrace gave the code back: the recording has
// ended and read everything), and exits 0.
// With "-" it exits at once after printing (the untraced reference).
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "target_shared.h"

__attribute__((noinline)) long leaf(long x) {
  __asm__ volatile("");
  return x * 3 + 1;
}
__attribute__((noinline)) long work(long i) { return leaf(i) + leaf(i + 1); }

static long from_init;
__attribute__((constructor)) static void init(void) {
  for (long i = 0; i < 7; i++) from_init += work(i);
}

static void* thread_work(void* arg) {
  long sum = 0;
  for (long i = 0; i < 2000; i++) sum += work(i);
  *(long*)arg = sum;
  return NULL;
}

int main(int argc, char** argv) {
  const int reference = argc < 2 || strcmp(argv[1], "-") == 0;
  const unsigned char patched = *(volatile unsigned char*)(void*)work;
  long a = 0, b = 0, s = 0;
  pthread_t t;
  pthread_create(&t, NULL, thread_work, &b);
  for (long i = 0; i < 3000; i++) a += work(i);
  pthread_join(t, NULL);
  for (int i = 0; i < 1500; i++) s += shared_fn(i);
  printf("init %ld sums %ld %ld shared %ld\n", from_init, a, b, s);
  fflush(stdout);
  if (reference) return 0;
  char done[4096];
  snprintf(done, sizeof done, "%s/done", argv[1]);
  fclose(fopen(done, "w"));
  for (int i = 0; i < 6000 && *(volatile unsigned char*)(void*)work == patched; i++) {
    struct timespec ts = {0, 5 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  printf("patched at main %s, given back %s\n", patched == 0xe9 ? "yes" : "no",
         *(volatile unsigned char*)(void*)work != patched ? "yes" : "no");
  return 0;
}
