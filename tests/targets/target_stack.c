/* A traced function called from three untraced callers a known number of
 * times each (issue 20, record --stack): the call stacks recorded at its
 * entry must name st_caller_a 2 times per round, st_caller_b 3 and
 * st_caller_c 5. Built with frame pointers and -O1, as a program whose
 * stacks a frame-pointer walk can follow (tests/integration/test_stacks.cpp).
 * It prints what it computed, so a traced run that changed it shows. */
#include "target_common.h"

static volatile long sink;

TRACED long st_leaf(long x) {
  sink += x;
  TARGET_BARRIER();
  return sink;
}

/* Untraced callers: real functions (noipa), whose call to st_leaf is not a
 * tail jump (the barrier after it), so each stays on the stack. */
#define CALLER(name, k)                  \
  TRACED long name(long x) {             \
    long r = st_leaf(x * (k));           \
    TARGET_BARRIER();                    \
    return r + 1;                        \
  }
CALLER(st_caller_a, 1)
CALLER(st_caller_b, 10)
CALLER(st_caller_c, 100)

int main(int argc, char** argv) {
  long rounds = target_count_arg(argc, argv, 0, 1), total = 0;
  for (long r = 0; r < rounds; r++) {
    for (int i = 0; i < 2; i++) total += st_caller_a(1);
    for (int i = 0; i < 3; i++) total += st_caller_b(1);
    for (int i = 0; i < 5; i++) total += st_caller_c(1);
  }
  printf("a=%ld b=%ld c=%ld total=%ld\n", 2 * rounds, 3 * rounds, 5 * rounds, total);
  return target_exit_code(argc, argv);
}
