// Google Benchmark of the trace file codec (formats/): how many events per
// second one core encodes with formats::TraceWriter::write_events and decodes
// with formats::TraceReader::next. Goals (issue 3): writer >= 20 M events/s per
// core, so it never is what loses events; reader >= 50 M events/s.
//
//   build/bench/format_codec_bench [--benchmark_filter=...]
//   env ATRACE_BENCH_DIR   where the files go (default /tmp)
//
// Events: bench/format_events.h (several threads, nested entry/exit,
// 20..200 ns apart), handed over in batches as the recorder does. Rates are
// per CPU second of the benchmark thread (items_per_second), so "per core".
// The writer writes a real file (page cache; the disk is not the subject).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/format_events.h"
#include "formats/trace_reader.h"
#include "formats/trace_writer.h"

namespace {

namespace formats = atrace::formats;
using atrace::bench::EventStream;
using atrace::bench::StreamParams;

std::string bench_path(const char* name) {
  const char* dir = std::getenv("ATRACE_BENCH_DIR");
  return std::string(dir && *dir ? dir : "/tmp") + "/atrace-bench-" + std::to_string(getpid()) +
         "-" + name + ".atrace";
}

// Pre-generated events: 4 M of them (96 MiB), replayed with shifted
// timestamps when used up, so the time stays monotonic without generating
// events inside the timed loop.
struct Pool {
  std::vector<formats::Event> events;
  uint64_t span = 0;  // ts of last - ts of first + 1
};

const Pool& pool(unsigned threads) {
  static std::vector<std::pair<unsigned, Pool>> pools;
  for (auto& [t, p] : pools)
    if (t == threads) return p;
  StreamParams sp;
  sp.threads = threads;
  EventStream s(sp);
  Pool p;
  s.generate(p.events, 4u << 20);
  p.span = p.events.back().ts - p.events.front().ts + 1000;
  pools.emplace_back(threads, std::move(p));
  return pools.back().second;
}

// Args: events per write_events() call, threads, zstd level.
void BM_Write(benchmark::State& state) {
  size_t batch = static_cast<size_t>(state.range(0));
  unsigned threads = static_cast<unsigned>(state.range(1));
  const Pool& p = pool(threads);
  std::string path = bench_path("write");
  StreamParams sp;
  sp.threads = threads;
  EventStream meta(sp);
  std::vector<formats::Event> work(p.events);
  size_t pos = 0;
  uint64_t events = 0;
  formats::WriterOptions opts;
  opts.zstd_level = static_cast<int>(state.range(2));
  // The writer's clock is the events' clock (flush by age as when live).
  uint64_t now = 0;
  opts.now = [&now] { return now; };
  {
    formats::TraceWriter w(path, opts);
    w.write_header(meta.header());
    w.write_probes(meta.probes());
    for (auto _ : state) {
      if (pos + batch > work.size()) {
        state.PauseTiming();
        for (auto& e : work) e.ts += p.span;
        pos = 0;
        state.ResumeTiming();
      }
      now = work[pos + batch - 1].ts;
      w.write_events(std::span<const formats::Event>(work.data() + pos, batch));
      pos += batch;
      events += batch;
    }
    // After the loop: not timed.
    w.finish(meta.header(), meta.threads(events / threads), formats::LostCounts{});
    state.counters["bytes_per_event"] =
        static_cast<double>(w.bytes_written()) / static_cast<double>(events ? events : 1);
    state.counters["events_per_block"] =
        static_cast<double>(events) /
        static_cast<double>(w.blocks_written() ? w.blocks_written() : 1);
  }
  state.SetItemsProcessed(static_cast<int64_t>(events));
  std::remove(path.c_str());
}
BENCHMARK(BM_Write)
    ->ArgNames({"batch", "threads", "zstd"})
    ->Args({8192, 4, 3})
    ->Args({1024, 4, 3})
    ->Args({65536, 4, 3})
    ->Args({8192, 1, 3})
    ->Args({8192, 16, 3})
    ->Args({8192, 4, 1})
    ->Args({8192, 4, -5})
    ->Args({8192, 4, 9})
    ->Unit(benchmark::kMillisecond)
    ->MinTime(2.0);

// Writes a file of n events with the given threads, once per process.
std::string read_file(uint64_t n, unsigned threads) {
  static std::vector<std::pair<std::pair<uint64_t, unsigned>, std::string>> files;
  for (auto& [k, f] : files)
    if (k.first == n && k.second == threads) return f;
  std::string path =
      bench_path(("read-" + std::to_string(n) + "-" + std::to_string(threads)).c_str());
  StreamParams sp;
  sp.threads = threads;
  EventStream s(sp);
  formats::WriterOptions opts;
  opts.now = [&s] { return s.now(); };
  formats::TraceWriter w(path, opts);
  w.write_header(s.header());
  w.write_probes(s.probes());
  std::vector<formats::Event> evs;
  for (uint64_t done = 0; done < n; done += 8192) {
    evs.clear();
    s.generate(evs, static_cast<size_t>(std::min<uint64_t>(8192, n - done)));
    w.write_events(evs);
  }
  w.finish(s.header(), s.threads(n / threads), formats::LostCounts{});
  files.emplace_back(std::make_pair(n, threads), path);
  std::atexit([] {
    for (auto& [k, f] : files) std::remove(f.c_str());
  });
  return path;
}

// Args: events in the file, threads. Opens the file and reads every event
// with next(), as `atrace report` does.
void BM_Read(benchmark::State& state) {
  uint64_t n = static_cast<uint64_t>(state.range(0));
  unsigned threads = static_cast<unsigned>(state.range(1));
  std::string path = read_file(n, threads);
  uint64_t events = 0;
  for (auto _ : state) {
    formats::TraceReader r(path);
    formats::Event ev;
    uint64_t sum = 0;
    while (r.next(ev)) {
      sum += ev.id;
      events++;
    }
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(static_cast<int64_t>(events));
}
BENCHMARK(BM_Read)
    ->ArgNames({"events", "threads"})
    ->Args({4 << 20, 4})
    ->Args({4 << 20, 1})
    ->Args({4 << 20, 16})
    ->Unit(benchmark::kMillisecond)
    ->MinTime(2.0);

}  // namespace

BENCHMARK_MAIN();
