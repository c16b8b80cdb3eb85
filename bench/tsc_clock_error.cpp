// How far the fast path's TSC -> CLOCK_MONOTONIC map (fastpath/tsc_clock.h)
// is from the clock itself: pairs (rdtsc, clock_gettime, rdtsc) every
// INTERVAL_MS for SECONDS; the map is built from every pair at ANCHOR_MS
// spacing (a recording's refreshes) and each other pair is compared with
// it: its CLOCK_MONOTONIC reading against the map at its bracket's middle.
// Also with one straight line over the whole run (no refresh), and the
// streaming residual (each pair against the map extrapolated to it).
//
//   tsc_clock_error [SECONDS=10] [INTERVAL_MS=10]
//
// docs/fast-path.md, "Reading the records", has the figures of this VM.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "fastpath/tsc_clock.h"

using atrace::fastpath::ClockPair;
using atrace::fastpath::TscClock;

namespace {

struct Stats {
  double max = 0, sum = 0;
  std::vector<double> all;
  void add(double v) {
    max = std::max(max, v);
    sum += v;
    all.push_back(v);
  }
  double pct(double p) {
    if (all.empty()) return 0;
    std::sort(all.begin(), all.end());
    return all[std::min(all.size() - 1, size_t(p / 100 * double(all.size())))];
  }
};

double dev(const TscClock& c, const ClockPair& p) {
  const double mapped = double(c.to_ns((p.before + p.after) / 2));
  return mapped > double(p.ns) ? mapped - double(p.ns) : double(p.ns) - mapped;
}

void report(const char* what, const std::vector<ClockPair>& pairs, size_t every) {
  TscClock c(UINT64_MAX);
  for (size_t i = 0; i < pairs.size(); i += every) c.add(pairs[i]);
  c.add(pairs.back());
  Stats s;
  for (size_t i = 0; i < pairs.size(); ++i)
    if (i % every) s.add(dev(c, pairs[i]));
  std::printf("%-28s anchors %5zu  checked %5zu  deviation ns: mean %7.1f  p99 %7.1f  max %7.1f\n",
              what, c.anchors(), s.all.size(), s.all.empty() ? 0 : s.sum / double(s.all.size()),
              s.pct(99), s.max);
}

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 10;
  const long interval_ms = argc > 2 ? std::atol(argv[2]) : 10;
  if (std::string why = atrace::fastpath::tsc_refusal(); !why.empty()) {
    std::fprintf(stderr, "tsc_clock_error: %s\n", why.c_str());
    return 1;
  }
  const size_t n = size_t(seconds * 1000 / double(interval_ms)) + 1;
  std::vector<ClockPair> pairs;
  TscClock streaming;
  Stats widths;
  for (size_t i = 0; i < n; ++i) {
    pairs.push_back(atrace::fastpath::read_pair());
    streaming.add(pairs.back());
    timespec ts{interval_ms / 1000, (interval_ms % 1000) * 1'000'000};
    nanosleep(&ts, nullptr);
  }
  const double ticks_per_ns = double(pairs.back().before - pairs.front().before) /
                              double(pairs.back().ns - pairs.front().ns);
  for (const ClockPair& p : pairs) widths.add(double(p.after - p.before) / ticks_per_ns);
  std::printf("%zu pairs, %ld ms apart, TSC %.4f GHz\n", pairs.size(), interval_ms, ticks_per_ns);
  std::printf("bracket width ns: median %.1f  p99 %.1f  max %.1f\n", widths.pct(50), widths.pct(99),
              widths.max);
  const size_t per100 = std::max<size_t>(1, size_t(100 / interval_ms));
  const size_t per1000 = std::max<size_t>(1, size_t(1000 / interval_ms));
  report("anchors every 100 ms", pairs, per100);
  report("anchors every 1 s", pairs, per1000);
  report("one line over the run", pairs, pairs.size() - 1);
  std::printf("streaming (each pair vs the map extrapolated %ld ms): max residual %llu ns\n",
              interval_ms, (unsigned long long)streaming.error().residual_ns);
  return 0;
}
