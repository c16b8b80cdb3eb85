// fastpath_cost: what the fast path's trampolines add to a call (issue 35;
// docs/BENCHMARKS.md, "Fast path: cost per call"). A trivial function is
// called N times in a loop, unpatched, then patched in this process
// (fastpath/local_patch.h: the same generated code atrace puts into a
// target), with the ring consumed between batches (every record kept), and
// with a ring that stays full (every record dropped, counted as lost).
// Prints the median over ROUNDS of ns per call for each.
//
//   fastpath_cost [CALLS (10000000)] [ROUNDS (5)]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "fastpath/local_patch.h"
#include "fastpath/trampoline.h"

using namespace atrace::fastpath;

// int fpc_fn(int x): x + 1, with a frame pointer prologue (push %rbp; mov
// %rsp,%rbp: 4 bytes, then the lea: 8 bytes replaced by the jump).
asm(R"(
  .text
  .balign 16
  .globl fpc_fn
  .type fpc_fn, @function
fpc_fn:
  push %rbp
  mov %rsp, %rbp
  lea 1(%rdi), %eax
  pop %rbp
  ret
  .size fpc_fn, . - fpc_fn
)");
extern "C" int fpc_fn(int);

namespace {

constexpr int kBatch = 100000;  // calls between two drains: 200000 records

// Calls fpc_fn `calls` times; `between` runs (untimed) after every batch.
template <typename F>
double ns_per_call(long calls, F between) {
  double ns = 0;
  volatile int sink = 0;
  for (long done = 0; done < calls; done += kBatch) {
    const auto t0 = std::chrono::steady_clock::now();
    int acc = 0;
    for (int i = 0; i < kBatch; ++i) acc += fpc_fn(i);
    const auto t1 = std::chrono::steady_clock::now();
    sink = sink + acc;
    ns += std::chrono::duration<double, std::nano>(t1 - t0).count();
    between();
  }
  return ns / static_cast<double>(calls);
}

// The trampolines' floor: the two time stamp reads of a call (entry and
// exit) alone, with the same instructions the records use. On a CPU where
// they cost most of the call (AMD EPYC under KVM here: rdtsc about 11-12 ns,
// issued no faster than that even with other work around it), no cheaper
// record brings the fast path under this.
double tsc_reads_ns_per_call(long calls, TscRead tsc) {
  uint64_t sink = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < calls; ++i) {
    uint64_t lo, hi, aux;
    for (int side = 0; side < 2; ++side) {
      if (tsc == TscRead::RdtscRdpid)
        asm volatile("rdtsc; rdpid %%rcx" : "=a"(lo), "=d"(hi), "=c"(aux));
      else asm volatile("rdtscp" : "=a"(lo), "=d"(hi), "=c"(aux));
      sink += lo ^ hi ^ aux;
    }
  }
  const auto t1 = std::chrono::steady_clock::now();
  volatile uint64_t keep = sink;
  (void)keep;
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(calls);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const long calls = argc > 1 ? std::atol(argv[1]) : 10000000;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 5;

  RingGeometry g;
  g.lane_count = 8;
  g.lane_slots = 1 << 18;  // one batch's 200000 records fit in any one lane
  LocalRing ring(g);
  RingGeometry tiny = g;
  tiny.lane_slots = 1;
  LocalRing full_ring(tiny);

  const auto fn = reinterpret_cast<uint64_t>(reinterpret_cast<const void*>(&fpc_fn));
  auto plan_in = [&](LocalCodeRegion& region, LocalRing& r, TscRead tsc) {
    CodeRegion code(region.data(), region.size(), region.address(), r.layout(), r.address(), 0,
                    tsc);
    const auto* bytes = reinterpret_cast<const uint8_t*>(&fpc_fn);
    PatchPlan p = code.add(bytes, 32, fn, 1);
    if (!p.ok()) {
      std::fprintf(stderr, "fastpath_cost: cannot patch: %s\n", p.refusal.c_str());
      std::exit(1);
    }
    region.seal();
    return p;
  };
  LocalCodeRegion region(reinterpret_cast<const void*>(&fpc_fn), 1 << 16);
  LocalCodeRegion full_region(reinterpret_cast<const void*>(&fpc_fn), 1 << 16);
  LocalCodeRegion rdtscp_region(reinterpret_cast<const void*>(&fpc_fn), 1 << 16);
  const TscRead best = best_tsc_read();
  const PatchPlan kept = plan_in(region, ring, best);
  const PatchPlan dropped = plan_in(full_region, full_ring, best);
  const PatchPlan with_rdtscp = plan_in(rdtscp_region, ring, TscRead::Rdtscp);

  std::vector<FastRecord> scratch;
  auto consume = [&] {
    scratch.clear();
    ring.drain(scratch);
  };
  std::vector<double> plain, hooked, lossy, rdtscp, reads;
  uint64_t records = 0;
  for (int r = 0; r < rounds; ++r) {
    plain.push_back(ns_per_call(calls, [] {}));
    reads.push_back(tsc_reads_ns_per_call(calls, best));
    {
      LocalPatch patch(fn, kept.jump);
      hooked.push_back(ns_per_call(calls, [&] {
        consume();
        records += scratch.size();
      }));
    }
    {
      LocalPatch patch(fn, dropped.jump);
      lossy.push_back(ns_per_call(calls, [] {}));
    }
    if (best != TscRead::Rdtscp) {
      LocalPatch patch(fn, with_rdtscp.jump);
      rdtscp.push_back(ns_per_call(calls, consume));
    }
  }
  std::printf("calls per round: %ld, rounds: %d\n", calls, rounds);
  std::printf("time and CPU read with:    %s\n",
              best == TscRead::RdtscRdpid ? "rdtsc + rdpid" : "rdtscp");
  std::printf("unpatched:                 %6.1f ns/call\n", median(plain));
  std::printf("patched, records kept:     %6.1f ns/call (%llu records, %llu lost)\n",
              median(hooked), static_cast<unsigned long long>(records),
              static_cast<unsigned long long>(ring.lost()));
  std::printf("patched, ring full:        %6.1f ns/call\n", median(lossy));
  if (!rdtscp.empty())
    std::printf("patched, with rdtscp:      %6.1f ns/call (records kept)\n", median(rdtscp));
  std::printf("added by the fast path:    %6.1f ns/call (records kept)\n",
              median(hooked) - median(plain));
  std::printf("of which 2 time reads:     %6.1f ns/call (the floor: entry and exit stamps)\n",
              median(reads));
  return 0;
}
