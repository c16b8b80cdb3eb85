// libFuzzer target over the trace file reader (formats/trace_reader.h).
//
// Each input is handed to formats::TraceReader as a file (a memfd, opened by its
// /proc/self/fd path, so the reader may seek in it as in a real file) and read
// completely: header, tables, warnings, every event through next(), then once
// more after rewind(). formats::TraceError is the expected answer to a bad file;
// anything else (a crash, a sanitizer report, a leak, another exception, a
// second pass that differs from the first) is a bug in the reader.
//
// Built with clang++ -fsanitize=fuzzer,address,undefined through CMake
// (-DATRACE_FUZZ=ON; tests/fuzz/run.sh);
// libFuzzer provides main().
//
// Each input is read twice: as given, then with the checksums of its frames
// recomputed (see fix_checksums), so that mutations reach the decoders.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <xxhash.h>

#include "formats/trace_reader.h"

namespace {

namespace formats = atrace::formats;

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
  formats::TraceReader r(path);
  const formats::TraceHeader& h = r.header();
  consume(h.atrace_version);
  consume(h.command_line);
  consume(h.target_command);
  consume(h.host);
  consume(h.kernel);
  g_sink = g_sink + h.target_pid + h.clock_id + h.start_mono_ns + h.start_real_ns + h.end_mono_ns +
           h.end_real_ns + r.version_major() + r.version_minor();
  for (const formats::ProbeInfo& p : r.probes()) {
    consume(p.name);
    consume(p.module);
    consume(p.path);
    g_sink = g_sink + p.id + p.address + p.offset + static_cast<uint8_t>(p.kind) +
             static_cast<uint8_t>(p.path_kind);
    consume(formats::to_string(p.path_kind));
  }
  for (const formats::ThreadInfo& t : r.threads()) {
    consume(t.name);
    g_sink = g_sink + t.tid + t.pid + t.first_ts + t.last_ts + t.events;
  }
  g_sink = g_sink + r.lost().total() + r.lost().per_cpu.size();

  // Two passes: the second after rewind() must give the same events.
  uint64_t counted[2] = {0, 0};
  uint64_t sums[2] = {0, 0};
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1) r.rewind();
    formats::Event ev;
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
      sums[pass] = sums[pass] * 1099511628211ull + ev.ts + ev.pid + ev.tid + ev.id + ev.cpu +
                   static_cast<uint8_t>(ev.kind);
      consume(formats::to_string(ev.kind));
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

// Reads the bytes as a trace file.
void read_bytes(const uint8_t* data, size_t size) {
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
  } catch (const formats::TraceError& e) {
    // Expected for a bad file; the message must still be a readable string.
    consume(e.what());
  }
  close(fd);
}

uint32_t le32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

// Format 2 checks every frame with an XXH3-64 checksum, so nearly every
// mutation of a frame's contents only reaches the checksum test. This gives
// the fuzzer a way past it: frames are located as a reader scanning the file
// finds them (sync "ATFR", 16-byte head, ext_len, stored_len, checksum after
// them; formats/FORMAT.md, "Frames") and their checksums recomputed. Returns
// false when no checksum changed.
bool fix_checksums(std::vector<uint8_t>& b) {
  static const uint8_t kSync[4] = {'A', 'T', 'F', 'R'};
  bool changed = false;
  size_t pos = 12;  // after the preamble
  while (pos + 24 <= b.size()) {
    if (std::memcmp(b.data() + pos, kSync, 4) != 0) {
      pos++;
      continue;
    }
    uint64_t ext_len = static_cast<uint64_t>(b[pos + 6]) | static_cast<uint64_t>(b[pos + 7]) << 8;
    uint64_t stored = le32(b.data() + pos + 8);
    uint64_t body = 16 + ext_len + stored;
    if (pos + body + 8 > b.size()) {
      pos++;
      continue;
    }
    uint64_t sum = XXH3_64bits(b.data() + pos, body);
    uint8_t le[8];
    for (int i = 0; i < 8; i++) le[i] = static_cast<uint8_t>(sum >> (8 * i));
    if (std::memcmp(b.data() + pos + body, le, 8) != 0) {
      std::memcpy(b.data() + pos + body, le, 8);
      changed = true;
    }
    pos += body + 8;
  }
  return changed;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // As given: damaged frames must be detected and skipped.
  read_bytes(data, size);
  // With checksums made right: what is behind them must be decoded safely.
  std::vector<uint8_t> fixed(data, data + size);
  if (size >= 12 && fix_checksums(fixed)) read_bytes(fixed.data(), fixed.size());
  return 0;
}
