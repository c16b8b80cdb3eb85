/* format_workload: a fixed call tree for bench/format_size.sh, recorded by
 * atrace and by uftrace to compare their trace file sizes.
 *
 *   format_workload [N]        (N defaults to 1000000)
 *
 *   main -> a()  N times       depth 1
 *           a -> b()  3 times  depth 2
 *                b -> c()  2 times  depth 3
 *
 * 10 calls per a(): N = 1000000 gives 10 million calls, 20 million entry
 * and exit events. Prints "calls=..." counted by the program itself.
 *
 * Built twice from this file: for atrace at -O2 with a 5-byte NOP at every
 * function entry (-pg -mfentry -mnop-mcount: optimized uprobes, the cheapest
 * probe), and for uftrace with plain -pg (mcount calls it hooks). */
#include <stdio.h>
#include <stdlib.h>

#define FN __attribute__((noinline, noclone, used))

static volatile unsigned long sink;
static unsigned long calls;

FN void c(unsigned long i) {
  ++calls;
  sink = sink * 31u + i;
}

FN void b(unsigned long i) {
  ++calls;
  c(i);
  __asm__ volatile("" ::: "memory");
  c(i + 1);
  __asm__ volatile("" ::: "memory");
}

FN void a(unsigned long i) {
  ++calls;
  for (unsigned long k = 0; k < 3; k++) {
    b(i + k);
    __asm__ volatile("" ::: "memory");
  }
}

int main(int argc, char **argv) {
  unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
  for (unsigned long i = 0; i < n; i++) {
    a(i);
    __asm__ volatile("" ::: "memory");
  }
  printf("calls=%lu\n", calls);
  return 0;
}
