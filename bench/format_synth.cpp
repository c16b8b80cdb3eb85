// format_synth: writes a synthetic trace file with formats::TraceWriter directly,
// to study the format's size and speed on any number of events (no tracing,
// no BPF), e.g. 100 million events for the memory use of `atrace report`.
//
//   format_synth [-n EVENTS] [-t THREADS] [-f FUNCTIONS] [-b BATCH] [-o FILE]
//                [-z ZSTD_LEVEL] [-k BLOCK_BYTES] [-i TRACE]
//
//   -n  events to write (default 10000000; suffixes k, M, G)
//   -t  threads (default 4)        -f  probed functions (default 16)
//   -b  events per write_events() call (default 8192; the recorder hands
//       over what it drained, a few thousand events per period)
//   -o  output file (default synth.atrace)
//   -z  zstd level of the writer (WriterOptions::zstd_level, default its own)
//   -k  block size of the writer (WriterOptions::block_bytes, default its own)
//   -i  re-encode the events of an existing trace file instead (same header,
//       probes, threads; -n, -t, -f ignored): how a real recording comes out
//       with another zstd level or block size
//
// The writer's clock ("now", for its flush by age) is the events' clock, as
// when recording live: the synthetic time starts at an arbitrary value.
//
// The events come from bench/format_events.h (nested entry/exit, 20..200 ns
// apart). Prints one line: events, bytes, bytes/event, and the writer's
// speed (CPU time inside write_events and finish only; generating the events
// is not counted).
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "bench/format_events.h"
#include "formats/trace_reader.h"
#include "formats/trace_writer.h"

namespace {

uint64_t parse_count(const char* s) {
  char* end = nullptr;
  double v = std::strtod(s, &end);
  if (end && *end) {
    switch (*end) {
      case 'k':
      case 'K': v *= 1e3; break;
      case 'm':
      case 'M': v *= 1e6; break;
      case 'g':
      case 'G': v *= 1e9; break;
      default: std::fprintf(stderr, "format_synth: bad count '%s'\n", s); std::exit(2);
    }
  }
  return static_cast<uint64_t>(v);
}

double cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t n = 10'000'000;
  size_t batch = 8192;
  std::string out = "synth.atrace";
  std::string in;
  atrace::bench::StreamParams p;
  atrace::formats::WriterOptions opts;
  for (int i = 1; i < argc; i++) {
    auto arg = [&](const char* name) -> const char* {
      if (std::strcmp(argv[i], name) != 0) return nullptr;
      if (i + 1 >= argc) {
        std::fprintf(stderr, "format_synth: %s needs a value\n", name);
        std::exit(2);
      }
      return argv[++i];
    };
    if (const char* v = arg("-n")) n = parse_count(v);
    else if (const char* v2 = arg("-t")) p.threads = static_cast<unsigned>(parse_count(v2));
    else if (const char* v3 = arg("-f")) p.functions = static_cast<unsigned>(parse_count(v3));
    else if (const char* v4 = arg("-b")) batch = parse_count(v4);
    else if (const char* v5 = arg("-o")) out = v5;
    else if (const char* v6 = arg("-z")) opts.zstd_level = std::atoi(v6);
    else if (const char* v7 = arg("-k")) opts.block_bytes = parse_count(v7);
    else if (const char* v8 = arg("-i")) in = v8;
    else {
      std::fprintf(
          stderr,
          "usage: format_synth [-n EVENTS] [-t THREADS] [-f FUNCTIONS] [-b BATCH] [-o FILE]\n"
          "                    [-z ZSTD_LEVEL] [-k BLOCK_BYTES] [-i TRACE]\n");
      return 2;
    }
  }
  if (p.threads == 0 || p.functions == 0 || batch == 0) {
    std::fprintf(stderr, "format_synth: -t, -f and -b must be positive\n");
    return 2;
  }

  atrace::bench::EventStream stream(p);
  uint64_t in_now = 0;
  if (in.empty()) opts.now = [&stream] { return stream.now(); };
  else opts.now = [&in_now] { return in_now; };
  try {
    std::unique_ptr<atrace::formats::TraceReader> r;
    if (!in.empty()) r = std::make_unique<atrace::formats::TraceReader>(in);
    atrace::formats::TraceWriter w(out, opts);
    double cpu = 0;
    double t0 = cpu_seconds();
    w.write_header(r ? r->header() : stream.header());
    w.write_probes(r ? r->probes() : stream.probes());
    cpu += cpu_seconds() - t0;
    std::vector<atrace::formats::Event> evs;
    uint64_t written = 0;
    while (r) {  // -i: re-encode
      evs.clear();
      atrace::formats::Event ev;
      while (evs.size() < batch && r->next(ev)) evs.push_back(ev);
      if (evs.empty()) break;
      in_now = evs.back().ts;
      t0 = cpu_seconds();
      w.write_events(evs);
      cpu += cpu_seconds() - t0;
    }
    while (!r && written < n) {
      evs.clear();
      size_t k = static_cast<size_t>(std::min<uint64_t>(batch, n - written));
      stream.generate(evs, k);
      if (written + k == n) stream.close(evs);
      t0 = cpu_seconds();
      w.write_events(evs);
      cpu += cpu_seconds() - t0;
      written += k;
    }
    t0 = cpu_seconds();
    if (r) w.finish(r->header(), r->threads(), r->lost());
    else
      w.finish(stream.header(), stream.threads(w.events_written() / p.threads),
               atrace::formats::LostCounts{std::vector<uint64_t>(8, 0)});
    cpu += cpu_seconds() - t0;
    uint64_t events = w.events_written();
    uint64_t bytes = w.bytes_written();
    std::error_code ec;
    if (out != "-" && std::filesystem::is_regular_file(out, ec))
      bytes = std::filesystem::file_size(out);
    std::printf(
        "events=%llu bytes=%llu bytes_per_event=%.3f blocks=%llu writer_cpu_s=%.3f "
        "writer_events_per_s=%.1fM file=%s\n",
        static_cast<unsigned long long>(events), static_cast<unsigned long long>(bytes),
        events ? static_cast<double>(bytes) / static_cast<double>(events) : 0.0,
        static_cast<unsigned long long>(w.blocks_written()), cpu,
        cpu > 0 ? static_cast<double>(events) / cpu / 1e6 : 0.0, out.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "format_synth: %s\n", e.what());
    return 1;
  }
  return 0;
}
