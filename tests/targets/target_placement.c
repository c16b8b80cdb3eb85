/* target_placement: calls the functions of placement_fns.S and a few C ones
 * built with -fcf-protection (endbr64 first) a known number of times, and
 * prints the counts and a checksum of what they returned (entry-probe
 * placement, tests/integration/test_placement.cpp).
 *
 *   target_placement [ROUNDS]   (default 100)
 *
 * Per round: pl_endbr_push x10, pl_mov_push x10 (+ 1 per c_outer call),
 * pl_mov_nop5 x10, pl_loop_to_probe(5), pl_loop_into_prefix(5),
 * pl_loop_to_start(3) (3 entries), pl_shared_tail, pl_side_door,
 * pl_red_zone, pl_indirect, c_outer(4) (calls pl_mov_push and c_leaf once
 * each, then itself: 4 entries), c_recurse(6) (6 entries). */
#include "target_common.h"

long pl_endbr_push(long);
long pl_mov_push(long);
long pl_mov_nop5(long);
long pl_loop_to_probe(long);
long pl_loop_into_prefix(long);
long pl_loop_to_start(long);
long pl_shared_tail(long);
long pl_side_door(long);
long pl_red_zone(long);
long pl_indirect(long);

TRACED long c_leaf(long x) { return x * 3 + 1; }

TRACED long c_outer(long n) {
  long s = pl_mov_push(n) + c_leaf(n);
  TARGET_BARRIER();
  if (n > 1) s += c_outer(n - 1);
  TARGET_BARRIER();
  return s;
}

TRACED long c_recurse(long n) {
  if (n <= 1) return 1;
  long r = n + c_recurse(n - 1);
  TARGET_BARRIER();
  return r;
}

int main(int argc, char** argv) {
  long rounds = target_count_arg(argc, argv, 0, 100);
  unsigned long sum = 0;
  for (long r = 0; r < rounds; r++) {
    for (long i = 0; i < 10; i++) {
      sum = sum * 31 + (unsigned long)pl_endbr_push(i);
      sum = sum * 31 + (unsigned long)pl_mov_push(i);
      sum = sum * 31 + (unsigned long)pl_mov_nop5(i);
    }
    sum = sum * 31 + (unsigned long)pl_loop_to_probe(5);
    sum = sum * 31 + (unsigned long)pl_loop_into_prefix(5);
    sum = sum * 31 + (unsigned long)pl_loop_to_start(3);
    sum = sum * 31 + (unsigned long)pl_shared_tail(r);
    sum = sum * 31 + (unsigned long)pl_side_door(r);
    sum = sum * 31 + (unsigned long)pl_red_zone(r);
    sum = sum * 31 + (unsigned long)pl_indirect(r);
    sum = sum * 31 + (unsigned long)c_outer(4);
    sum = sum * 31 + (unsigned long)c_recurse(6);
  }
  printf("rounds=%ld checksum=%lu\n", rounds, sum);
  /* One "name=calls" line each. */
  const struct {
    const char* name;
    long calls;
  } expected[] = {
      {"pl_endbr_push", 10 * rounds}, {"pl_mov_push", 14 * rounds},    {"pl_mov_nop5", 10 * rounds},
      {"pl_loop_to_probe", rounds},   {"pl_loop_into_prefix", rounds}, {"pl_loop_to_start", 3 * rounds},
      {"pl_shared_tail", rounds},     {"pl_side_door", rounds},        {"pl_red_zone", rounds},
      {"pl_indirect", rounds},        {"c_outer", 4 * rounds},         {"c_leaf", 4 * rounds},
      {"c_recurse", 6 * rounds},
  };
  for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++)
    printf("%s=%ld\n", expected[i].name, expected[i].calls);
  return target_exit_code(argc, argv);
}
