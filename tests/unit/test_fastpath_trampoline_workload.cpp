// A small program of ordinary compiled functions (fpw_*), built with
// -fcf-protection=full (endbr64 first, as distributions build) for
// test_fastpath_trampoline.cpp to patch every one of them: relocation on
// what GCC really emits (loops, a jump table, RIP-relative globals,
// recursion, callbacks from libc, floating point), checked by the result.
#include <cstdlib>

#include "test_fastpath_trampoline_fns.h"

#define FPW __attribute__((noinline, noipa))

extern "C" {

int fpw_counter = 0;
static const int fpw_table[8] = {3, 1, 4, 1, 5, 9, 2, 6};

int fpw_fib_calls = 0;

// 1973 calls for n = 15 (C(n) = 1 + C(n-1) + C(n-2)). A xor, not a sum:
// GCC turns a sum of two recursive calls into one call and a loop.
FPW int fpw_fib(int n) {
  ++fpw_fib_calls;
  return n < 2 ? n : fpw_fib(n - 1) ^ (fpw_fib(n - 2) << 1);
}

FPW unsigned fpw_hash(const char* s) {
  unsigned h = 2166136261u;
  while (*s) {
    h ^= static_cast<unsigned char>(*s++);
    h *= 16777619u;
  }
  return h;
}

FPW int fpw_cmp(const void* a, const void* b) {
  const int x = *static_cast<const int*>(a), y = *static_cast<const int*>(b);
  return (x > y) - (x < y);
}

FPW int fpw_classify(int c) {
  switch (c % 9) {
    case 0: return 10;
    case 1: return 3;
    case 2: return 7;
    case 3: return c * 2;
    case 4: return -c;
    case 5: return 99;
    case 6: return c / 3;
    case 7: return c ^ 0x55;
    default: return 1;
  }
}

FPW double fpw_poly(double x) { return ((x * 3 + 2) * x + 1) * x; }

FPW long fpw_sum(const long* a, int n) {
  long s = 0;
  for (int i = 0; i < n; ++i) s += a[i];
  return s;
}

FPW int fpw_count(void) { return ++fpw_counter; }

FPW int fpw_lookup(int i) { return fpw_table[i & 7]; }

FPW long fpw_run(void) {
  long check = fpw_fib(15);
  int v[500];
  unsigned seed = 12345;
  for (int& x : v) {
    seed = seed * 1103515245u + 12345u;
    x = static_cast<int>(seed >> 8) % 100000;
  }
  qsort(v, 500, sizeof v[0], fpw_cmp);
  for (int i = 1; i < 500; ++i)
    if (v[i - 1] > v[i]) check += 1000000;
  check += v[0] + v[499];
  const char* words[] = {"alpha", "beta", "gamma", "delta", ""};
  for (const char* w : words) check += fpw_hash(w) % 1000;
  for (int c = 0; c < 100; ++c) check += fpw_classify(c);
  check += static_cast<long>(fpw_poly(1.5) * 1000);
  long a[64];
  for (int i = 0; i < 64; ++i) a[i] = i * i;
  check += fpw_sum(a, 64);
  for (int i = 0; i < 10; ++i) check += fpw_count() + fpw_lookup(i);
  return check;
}

}  // extern "C"
