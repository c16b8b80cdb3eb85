// libFuzzer target over the trace file reader (formats/trace_reader.h).
//
// Each input is handed to fmt::TraceReader as a file (a memfd, opened by its
// /proc/self/fd path, so the reader may seek in it as in a real file) and read
// completely: header, tables, warnings, every event through next(), then once
// more after rewind(). fmt::TraceError is the expected answer to a bad file;
// anything else (a crash, a sanitizer report, a leak, another exception, a
// second pass that differs from the first) is a bug in the reader.
//
// Built with clang++ -fsanitize=fuzzer,address,undefined by tests/fuzz/run.sh;
// libFuzzer provides main().
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "formats/trace_reader.h"

namespace {

namespace fmt = atrace::fmt;

// Touches every field so that uninitialized or out-of-bounds memory behind a
// string or vector shows up under the sanitizers.
volatile uint64_t g_sink;
const bool g_strict_order = std::getenv("ATRACE_FUZZ_STRICT_ORDER") != nullptr;

void consume(const std::string& s) {
  uint64_t h = s.size();
  for (unsigned char c : s) h = h * 31 + c;
  g_sink = g_sink + h;
}

void read_all(const std::string& path) {
  fmt::TraceReader r(path);
  const fmt::TraceHeader& h = r.header();
  consume(h.atrace_version);
  consume(h.command_line);
  consume(h.target_command);
  consume(h.host);
  consume(h.kernel);
  g_sink = g_sink + h.target_pid + h.clock_id + h.start_mono_ns + h.start_real_ns +
           h.end_mono_ns + h.end_real_ns + r.version_major() + r.version_minor();
  for (const fmt::ProbeInfo& p : r.probes()) {
    consume(p.name);
    consume(p.module);
    consume(p.path);
    g_sink = g_sink + p.id + p.address + p.offset + static_cast<uint8_t>(p.kind) +
             static_cast<uint8_t>(p.path_kind);
    consume(fmt::to_string(p.path_kind));
  }
  for (const fmt::ThreadInfo& t : r.threads()) {
    consume(t.name);
    g_sink = g_sink + t.tid + t.pid + t.first_ts + t.last_ts + t.events;
  }
  g_sink = g_sink + r.lost().total() + r.lost().per_cpu.size();

  // Two passes: the second after rewind() must give the same events.
  uint64_t counted[2] = {0, 0};
  uint64_t sums[2] = {0, 0};
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1) r.rewind();
    fmt::Event ev;
    uint64_t last_ts = 0;
    while (r.next(ev)) {
      // A well-formed file gives events in time order. A crafted one (blocks
      // of one thread spliced from two files, each with a valid checksum) may
      // not, and the reader does not promise to notice: only checked when
      // ATRACE_FUZZ_STRICT_ORDER is set.
      if (ev.ts < last_ts && g_strict_order) {
        std::fprintf(stderr, "fuzz: event %llu out of time order (%llu after %llu)\n",
                     static_cast<unsigned long long>(counted[pass]),
                     static_cast<unsigned long long>(ev.ts),
                     static_cast<unsigned long long>(last_ts));
        std::abort();
      }
      last_ts = ev.ts;
      counted[pass]++;
      sums[pass] = sums[pass] * 1099511628211ull + ev.ts + ev.pid + ev.tid + ev.id +
                   ev.cpu + static_cast<uint8_t>(ev.kind);
      consume(fmt::to_string(ev.kind));
    }
  }
  if (counted[0] != counted[1] || sums[0] != sums[1]) {
    std::fprintf(stderr, "fuzz: rewind() gave %llu events, the first pass %llu\n",
                 static_cast<unsigned long long>(counted[1]),
                 static_cast<unsigned long long>(counted[0]));
    std::abort();
  }
  g_sink = g_sink + r.event_count() + sums[0];
  for (const std::string& w : r.warnings()) consume(w);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  int fd = memfd_create("fuzz_trace", MFD_CLOEXEC);
  if (fd < 0) {
    std::perror("memfd_create");
    std::abort();
  }
  size_t done = 0;
  while (done < size) {
    ssize_t n = write(fd, data + done, size - done);
    if (n <= 0) {
      std::perror("write memfd");
      std::abort();
    }
    done += static_cast<size_t>(n);
  }
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  try {
    read_all(path);
  } catch (const fmt::TraceError& e) {
    // Expected for a bad file; the message must still be a readable string.
    consume(e.what());
  }
  close(fd);
  return 0;
}
