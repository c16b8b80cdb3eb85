/* A target GCC splits: each traced function has an unlikely path that moves
 * to a "NAME.cold" fragment, jumped into from the middle of NAME (built with
 * -freorder-blocks-and-partition, the default at -O2, which the other
 * targets turn off). A return probe there would overwrite a stack slot that
 * is not a return address (issue 14); the test checks with nm that the
 * fragments exist and that tracing with --select='*' changes nothing.
 *
 *   target_cold [N]   calls checked() N times (default 2000); every 100th
 *                     call takes the cold path. Prints "checked=N". */
#include "target_common.h"

static volatile long rare_total;

__attribute__((cold, noinline)) static void rare(long x, const char* why) {
  rare_total += x;
  if (x < 0) fprintf(stderr, "rare %s %ld\n", why, x);
}

/* Not TRACED (noipa would keep GCC from splitting): noinline is enough to
 * keep it a function of its own. */
__attribute__((noinline)) long checked(long x) {
  long y = x * 7 + 3;
  if (__builtin_expect(x % 100 == 99, 0)) {
    rare(x, "checked");
    y = -y / 3 + rare_total % 11;
    for (int i = 0; i < 3; ++i) y ^= (y << 1) + i;
  }
  return y;
}

__attribute__((noinline)) long scaled(long x) {
  if (__builtin_expect(x > 1000000, 0)) {
    rare(x, "scaled");
    return -1;
  }
  return checked(x) % 1000;
}

int main(int argc, char** argv) {
  long n = target_count_arg(argc, argv, 0, 2000);
  long sum = 0;
  for (long i = 0; i < n; ++i) sum += scaled(i);
  printf("sum=%ld rare=%ld\n", sum, (long)rare_total);
  printf("checked=%ld\n", n);
  return target_exit_code(argc, argv);
}
