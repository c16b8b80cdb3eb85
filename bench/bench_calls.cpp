// Google Benchmark: the untraced cost of one call of each probed function,
// i.e. the baseline uprobe_cost.sh subtracts. It shows that the entry
// variants (5-byte NOP, five 1-byte NOPs, push) cost the same as an
// ordinary entry when no probe is attached.
#include <benchmark/benchmark.h>

#include "bench_fns.h"

template <long (*F)(long)>
static void BM_call(benchmark::State& state) {
  long i = 0;
  for (auto _ : state) {
    long r = F(i++);
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations());
}

BENCHMARK(BM_call<bench_fn_singlestep>)->Name("call/singlestep");
BENCHMARK(BM_call<bench_fn_push>)->Name("call/push");
BENCHMARK(BM_call<bench_fn_nop5>)->Name("call/nop5");
BENCHMARK(BM_call<bench_fn_nop1x5>)->Name("call/nop1x5");
