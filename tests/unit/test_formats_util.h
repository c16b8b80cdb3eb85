// Helpers shared by the trace-format tests (test_formats_*.cpp).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "formats/trace_reader.h"
#include "formats/trace_writer.h"
#include "temp_file.h"

namespace atrace::formats::testing {

using atrace::testing::TempFile;

inline TraceHeader sample_header() {
  TraceHeader h;
  h.atrace_version = "0.1.0";
  h.command_line = "atrace record -- ./demo 3";
  h.target_command = "./demo 3";
  h.target_pid = 4242;
  h.host = "box";
  h.kernel = "6.18.0";
  h.kernel_events = "sched,syscalls";
  h.start_mono_ns = 1000;
  h.start_real_ns = 1700000000000000000ull;
  return h;
}

inline std::vector<ProbeInfo> sample_probes() {
  ProbeInfo a;
  a.id = 1;
  a.name = "compute(int)";
  a.module = "demo";
  a.path = "/tmp/demo";
  a.address = 0x401136;
  a.offset = 0x1136;
  a.path_kind = ProbePath::Nop5;
  a.build_id = "0123456789abcdef0123456789abcdef01234567";
  ProbeInfo b = a;
  b.id = 2;
  b.name = "deflate";
  b.module = "libz.so.1";
  b.path = "/usr/lib/x86_64-linux-gnu/libz.so.1";
  b.path_kind = ProbePath::SingleStep;
  b.offset = 0x1140;
  b.entry_delta = 4;  // probed past its first instruction
  b.build_id = "";
  return {a, b};
}

inline Event ev(uint64_t ts, uint32_t tid, EventKind kind, uint32_t id = 1, uint16_t cpu = 0) {
  Event e;
  e.ts = ts;
  e.pid = 4242;
  e.tid = tid;
  e.id = id;
  e.cpu = cpu;
  e.kind = kind;
  return e;
}

inline bool same_args(const std::vector<ProbeArg>& a, const std::vector<ProbeArg>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); i++) {
    if (a[i].is_string != b[i].is_string || a[i].is_signed != b[i].is_signed) return false;
    if (a[i].slot != b[i].slot || a[i].format != b[i].format || a[i].str_state != b[i].str_state)
      return false;
    if (a[i].is_string ? a[i].str != b[i].str
                       : (a[i].size != b[i].size || a[i].value != b[i].value))
      return false;
  }
  return true;
}

inline bool same(const Event& a, const Event& b) {
  return a.ts == b.ts && a.pid == b.pid && a.tid == b.tid && a.id == b.id && a.cpu == b.cpu &&
         a.kind == b.kind && a.flags == b.flags && a.arg0 == b.arg0 && a.arg1 == b.arg1 &&
         a.text == b.text && same_args(a.args, b.args) && a.stack == b.stack;
}

inline std::vector<Event> all_events(TraceReader& r) {
  std::vector<Event> out;
  Event e;
  while (r.next(e)) out.push_back(e);
  return out;
}

// A clock the test moves by hand, for the writer's age-based flush.
struct FakeClock {
  uint64_t now = 0;
  WriterOptions options(size_t block_bytes = 64 * 1024) {
    WriterOptions o;
    o.block_bytes = block_bytes;
    o.now = [this] { return now; };
    return o;
  }
};

inline bool has_warning(const TraceReader& r, const std::string& part) {
  for (const auto& w : r.warnings())
    if (w.find(part) != std::string::npos) return true;
  return false;
}

}  // namespace atrace::formats::testing
