// sync_accuracy: the clock synchronisation of sync/ on simulated runs
// (sync/simulate.h), many seeds, against the averaged constant offset
// other tools apply and the REALTIME rendezvous, on the same data. Prints
// the numbers docs/BENCHMARKS.md ("Clock synchronisation") quotes.
//
//   sync_accuracy [SEEDS] [HOSTS] [DURATION_S] [SLEW_PPM] [MAX_JITTER]
//
// MAX_JITTER: the largest mean jitter, as a fraction of the minimum delay
// (sync/simulate.h; default 0.5).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "sync/sync.h"

using namespace atrace::sync;

namespace {

int64_t percentile(std::vector<int64_t> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i =
      std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5));
  return v[i];
}

}  // namespace

int main(int argc, char** argv) {
  int seeds = argc > 1 ? std::atoi(argv[1]) : 1000;
  uint32_t hosts = argc > 2 ? static_cast<uint32_t>(std::atoi(argv[2])) : 4;
  int64_t duration_s = argc > 3 ? std::atoll(argv[3]) : 20;
  double slew_ppm = argc > 4 ? std::atof(argv[4]) : 0;
  double max_jitter = argc > 5 ? std::atof(argv[5]) : SimOptions{}.max_jitter;

  size_t seeds_ok = 0, outside = 0, events = 0, before = 0, after = 0, links = 0;
  size_t links_ok = 0, tree_links = 0;
  std::vector<int64_t> ours, one_line, averaged, realtime, ratio_permille, shifts;
  std::vector<int64_t> worst_vs_ref;
  auto t0 = std::chrono::steady_clock::now();
  for (int seed = 1; seed <= seeds; ++seed) {
    SimOptions o;
    o.hosts = hosts;
    o.seed = static_cast<uint64_t>(seed);
    o.duration_ns = duration_s * 1'000'000'000;
    o.max_jitter = max_jitter;
    if (slew_ppm > 0) {
      o.slew_at_ns = o.duration_ns / 2;
      o.slew_ppm = slew_ppm;
    }
    Simulation sim = simulate(o);
    SyncResult r = synchronize(sim.input);
    SimScore s = score(sim, r.hosts);
    outside += s.outside_bounds;
    events += s.events;
    worst_vs_ref.push_back(s.max_error_ns);
    bool ok = s.outside_bounds == 0;
    for (const auto& l : s.links) {
      ++links;
      links_ok += l.max_error_ns <= l.allowed_ns;
      ratio_permille.push_back(l.max_error_ns * 1000 / std::max<int64_t>(1, l.allowed_ns));
    }
    // The criterion on the tree's pairs: each corrected pair of
    // hosts within half its two minimum delays.
    for (const auto& p : r.pairs) {
      if (!p.in_tree) continue;
      ++tree_links;
      for (const auto& l : s.links)
        if (l.a == p.a && l.b == p.b && l.max_error_ns > l.allowed_ns) ok = false;
    }
    // Each method's own pair map, on the same messages.
    for (auto [a, b] : sim.links) {
      const auto& ab = samples(sim, a, b);
      const auto& ba = samples(sim, b, a);
      auto fit = fit_messages(a, b, ab, ba, sim.input.options);
      ours.push_back(pair_error(sim, a, b, fit->b_to_a));
      SyncOptions no_windows = sim.input.options;
      no_windows.window_ns = no_windows.min_window_ns = 1'000'000'000'000;
      one_line.push_back(pair_error(sim, a, b, fit_messages(a, b, ab, ba, no_windows)->b_to_a));
      averaged.push_back(pair_error(sim, a, b, averaged_offset(ab, ba)));
      auto rt = fit_realtime(a, sim.input.hosts[a], b, sim.input.hosts[b]);
      realtime.push_back(pair_error(sim, a, b, rt->b_to_a));
    }
    auto times = corrected_events(sim, r.hosts);
    RepairResult rep = causal_repair(times, sim.matched);
    before += rep.violations_before;
    after += rep.violations_after;
    for (int64_t x : rep.largest_shift_ns) shifts.push_back(x);
    ok = ok && rep.violations_after == 0;
    seeds_ok += ok;
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf(
      "%d seeds, %u hosts, %lld s each, jitter up to %.2f of the minimum delay%s: %.2f s (%.1f ms "
      "a seed)\n",
      seeds, hosts, static_cast<long long>(duration_s), max_jitter,
      slew_ppm > 0 ? ", a rate change mid-run" : "", secs, secs * 1000 / seeds);
  std::printf("seeds meeting every criterion: %zu (%.2f %%)\n", seeds_ok, 100.0 * seeds_ok / seeds);
  std::printf("links within half their minimum delays (tree or not): %zu of %zu; tree edges %zu\n",
              links_ok, links, tree_links);
  std::printf("error / allowed, per link: p50 %.3f p99 %.3f max %.3f\n",
              percentile(ratio_permille, 0.5) / 1000.0, percentile(ratio_permille, 0.99) / 1000.0,
              percentile(ratio_permille, 1.0) / 1000.0);
  std::printf("events outside their host's bound: %zu of %zu\n", outside, events);
  std::printf("worst error against the reference host per seed (us): p50 %.1f p99 %.1f max %.1f\n",
              percentile(worst_vs_ref, 0.5) / 1e3, percentile(worst_vs_ref, 0.99) / 1e3,
              percentile(worst_vs_ref, 1.0) / 1e3);
  std::printf("receives before send + 0: %zu before repair, %zu after; largest shift p99 %.1f us\n",
              before, after, percentile(shifts, 0.99) / 1e3);
  std::printf("per pair, worst error over its events (us):   p50      p99      max\n");
  auto row = [&](const char* name, const std::vector<int64_t>& v) {
    std::printf("  %-34s %8.1f %8.1f %8.1f\n", name, percentile(v, 0.5) / 1e3,
                percentile(v, 0.99) / 1e3, percentile(v, 1.0) / 1e3);
  };
  row("convex hull, windowed (sync/)", ours);
  row("convex hull, one line over the run", one_line);
  row("averaged constant offset", averaged);
  row("REALTIME rendezvous", realtime);
  return 0;
}
