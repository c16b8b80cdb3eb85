// Synthetic but realistic event streams for the trace file benchmarks
// (format_codec_bench.cpp, format_synth.cpp).
//
// T threads of one process each run a call tree over F probed functions: at
// every step a thread either enters a function (while below max_depth) or
// leaves the innermost one, so entries and exits nest properly. Time advances
// by a small random delta per event (20..200 ns, the gap between two traced
// calls of a hot path), shared by all threads, and each event belongs to a
// random thread: the per-thread streams interleave as the recorder's
// per-CPU rings deliver them, already merged into time order. CPUs follow the
// threads (tid % ncpu) with an occasional migration.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "formats/trace_types.h"

namespace atrace::bench {

struct StreamParams {
  unsigned threads = 4;
  unsigned functions = 16;
  unsigned max_depth = 6;
  uint32_t pid = 4242;
  uint64_t start_ts = 1'000'000'000'000ull;
  uint64_t seed = 1;
};

class EventStream {
 public:
  explicit EventStream(const StreamParams& p)
      : p_(p), ts_(p.start_ts), rng_(p.seed), stacks_(p.threads) {}

  // Appends n events to out.
  void generate(std::vector<formats::Event>& out, size_t n) {
    std::uniform_int_distribution<uint32_t> delta(20, 200);
    std::uniform_int_distribution<unsigned> thread(0, p_.threads - 1);
    std::uniform_int_distribution<uint32_t> fn(1, p_.functions);
    std::uniform_int_distribution<unsigned> pct(0, 99);
    out.reserve(out.size() + n);
    for (size_t i = 0; i < n; i++) {
      unsigned t = thread(rng_);
      auto& st = stacks_[t];
      formats::Event ev;
      ts_ += delta(rng_);
      ev.ts = ts_;
      ev.pid = p_.pid;
      ev.tid = p_.pid + t;
      ev.cpu = static_cast<uint16_t>((t + (pct(rng_) == 0 ? 1 : 0)) % 8);
      // Deeper stacks lean towards returning, so the depth hovers around 3.
      bool enter = st.empty() || (st.size() < p_.max_depth && pct(rng_) < 100 - 15 * st.size());
      if (enter) {
        ev.kind = formats::EventKind::FuncEntry;
        // Callee ids depend on the caller, as in a real call graph: a few hot
        // pairs rather than uniform noise.
        uint32_t id =
            st.empty() ? 1 + (fn(rng_) % 2) : (st.back() * 3 + pct(rng_) % 3) % p_.functions + 1;
        ev.id = id;
        st.push_back(id);
      } else {
        ev.kind = formats::EventKind::FuncExit;
        ev.id = st.back();
        st.pop_back();
      }
      out.push_back(ev);
    }
  }

  // Exits for every open call, then a ThreadExit per thread.
  void close(std::vector<formats::Event>& out) {
    for (unsigned t = 0; t < p_.threads; t++) {
      auto& st = stacks_[t];
      while (!st.empty()) {
        formats::Event ev;
        ev.ts = ts_ += 50;
        ev.pid = p_.pid;
        ev.tid = p_.pid + t;
        ev.cpu = static_cast<uint16_t>(t % 8);
        ev.kind = formats::EventKind::FuncExit;
        ev.id = st.back();
        st.pop_back();
        out.push_back(ev);
      }
      formats::Event ev;
      ev.ts = ts_ += 50;
      ev.pid = p_.pid;
      ev.tid = p_.pid + t;
      ev.cpu = static_cast<uint16_t>(t % 8);
      ev.kind = formats::EventKind::ThreadExit;
      out.push_back(ev);
    }
  }

  uint64_t now() const { return ts_; }

  std::vector<formats::ProbeInfo> probes() const {
    std::vector<formats::ProbeInfo> out;
    for (uint32_t id = 1; id <= p_.functions; id++) {
      formats::ProbeInfo pi;
      pi.id = id;
      pi.name = "bench::function_" + std::to_string(id) + "(int, long)";
      pi.module = "format_synth";
      pi.path = "/usr/local/bin/format_synth";
      pi.address = 0x401000 + 0x40 * id;
      pi.offset = 0x1000 + 0x40 * id;
      pi.path_kind = formats::ProbePath::Nop5;
      out.push_back(pi);
    }
    return out;
  }

  std::vector<formats::ThreadInfo> threads(uint64_t events_per_thread) const {
    std::vector<formats::ThreadInfo> out;
    for (unsigned t = 0; t < p_.threads; t++) {
      formats::ThreadInfo ti;
      ti.tid = p_.pid + t;
      ti.pid = p_.pid;
      ti.name = "worker" + std::to_string(t);
      ti.first_ts = p_.start_ts;
      ti.last_ts = ts_;
      ti.events = events_per_thread;
      out.push_back(ti);
    }
    return out;
  }

  formats::TraceHeader header() const {
    formats::TraceHeader h;
    h.atrace_version = "bench";
    h.command_line = "format_synth";
    h.target_command = "synthetic workload";
    h.target_pid = p_.pid;
    h.host = "bench-host";
    h.kernel = "6.1.0";
    h.start_mono_ns = p_.start_ts;
    h.start_real_ns = 1'700'000'000'000'000'000ull;
    h.end_mono_ns = ts_;
    h.end_real_ns = h.start_real_ns + (ts_ - p_.start_ts);
    return h;
  }

 private:
  StreamParams p_;
  uint64_t ts_;
  std::mt19937_64 rng_;
  std::vector<std::vector<uint32_t>> stacks_;
};

}  // namespace atrace::bench
