// throw_workload: N calls through three functions (tw_f1 -> tw_f2 ->
// tw_f3) that either return or throw from tw_f3 to a catch in the loop,
// timed; bench/throw_cost.sh traces the three and compares.
//   throw_workload throw|return N   prints "ns_per_iteration=X"
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#define BENCH_FN __attribute__((noipa, used))

BENCH_FN int tw_f3(int x, bool t) {
  if (t) throw x;
  return x;
}
BENCH_FN int tw_f2(int x, bool t) {
  int r = tw_f3(x, t);
  __asm__ volatile("" ::: "memory");
  return r + 1;
}
BENCH_FN int tw_f1(int x, bool t) {
  int r = tw_f2(x, t);
  __asm__ volatile("" ::: "memory");
  return r + 1;
}

static double now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: throw_workload throw|return N\n");
    return 2;
  }
  const bool t = !std::strcmp(argv[1], "throw");
  const long n = std::atol(argv[2]);
  long sum = 0;
  // The first throw loads libgcc_s and fills the unwinder's caches.
  try {
    sum += tw_f1(-1, true);
  } catch (int v) {
    sum += v;
  }
  const double t0 = now_ns();
  for (long i = 0; i < n; ++i) {
    try {
      sum += tw_f1(static_cast<int>(i), t);
    } catch (int v) {
      sum += v;
    }
  }
  const double t1 = now_ns();
  std::printf("sum=%ld ns_per_iteration=%.0f\n", sum, (t1 - t0) / static_cast<double>(n));
  return 0;
}
