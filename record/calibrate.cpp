#include "record/calibrate.h"

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "base/clock.h"
#include "record/attach.h"
#include "uprobes/probe_site.h"

extern "C" {
long atrace_calibrate_nop5(long);
long atrace_calibrate_push(long);
long atrace_calibrate_mov(long);
}

namespace atrace {

std::optional<MappedCode> mapping_of(std::string_view maps, uint64_t address) {
  std::istringstream in{std::string(maps)};
  std::string line;
  while (std::getline(in, line)) {
    unsigned long long start = 0, end = 0, offset = 0;
    char perms[8] = {};
    int path_at = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &offset,
                    &path_at) < 4 ||
        path_at == 0)
      continue;
    if (address < start || address >= end) continue;
    std::string path = line.substr(static_cast<size_t>(path_at));
    // Anonymous and special mappings ([heap], [uprobes]...) have no file to probe.
    if (path.empty() || path.front() != '/') return std::nullopt;
    return MappedCode{path, address - start + offset};
  }
  return std::nullopt;
}

double lower_quartile_per_call(std::vector<double> batch_ns, size_t calls_per_batch) {
  if (batch_ns.empty() || calls_per_batch == 0) return 0;
  auto q = batch_ns.begin() + static_cast<std::ptrdiff_t>(batch_ns.size() / 4);
  std::nth_element(batch_ns.begin(), q, batch_ns.end());
  return *q / static_cast<double>(calls_per_batch);
}

uint64_t added_cost_ns(double probed_per_call, double baseline_per_call) {
  double d = probed_per_call - baseline_per_call;
  return d > 0 ? static_cast<uint64_t>(std::llround(d)) : 0;
}

uint64_t CalibrationRecords::median_interval(uint32_t id) const {
  std::vector<Rec> mine;
  for (const auto& r : recs_)
    if (r.id == id) mine.push_back(r);
  std::sort(mine.begin(), mine.end(), [](const Rec& a, const Rec& b) { return a.ts < b.ts; });
  std::vector<uint64_t> d;
  for (size_t i = 0; i + 1 < mine.size(); ++i) {
    if (!mine[i].entry || mine[i + 1].entry) continue;  // a lost record: skip that call
    d.push_back(mine[i + 1].ts - mine[i].ts);
    ++i;
  }
  if (d.empty()) return 0;
  auto mid = d.begin() + static_cast<std::ptrdiff_t>(d.size() / 2);
  std::nth_element(d.begin(), mid, d.end());
  return *mid;
}

size_t calls_per_batch(size_t ring_bytes, size_t wanted) {
  constexpr size_t kBytesPerCall = 2 * 32;
  if (ring_bytes == 0) ring_bytes = 64 * 1024;
  return std::clamp<size_t>(ring_bytes / 4 / kBytesPerCall, 1, wanted);
}

namespace {

using Fn = long (*)(long);

// One path to measure: its function, how many batches of how many calls.
struct Path {
  const char* name;
  Fn fn;
  formats::ProbePath expected;
  size_t batches;
  size_t calls;  // per batch
  uint64_t* result;
  uint64_t* inside;
  uint32_t id = 0;  // the probe's cookie
  double baseline = 0;
  bool attached = false;
  std::vector<double> samples;  // ns per batch
};

// Thread CPU time per batch: time the thread spent preempted is not the
// probe's. The result is fed back into the argument so that no call can be
// skipped.
double time_batch(const Path& p) {
  long x = 0;
  uint64_t t0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
  for (size_t i = 0; i < p.calls; ++i) x = p.fn(x);
  double ns = static_cast<double>(now_ns(CLOCK_THREAD_CPUTIME_ID) - t0);
  volatile long sink = x;
  (void)sink;
  return ns;
}

// One batch of each path in turn: a disturbance (other processes on the
// CPU, caches, frequency) then hits all paths alike instead of one, and the
// lower quartile of each path's batches is its undisturbed cost. Measured
// here under a load of 10 on 2 CPUs, medians of separate runs could even
// put the NOP5 above the emulated path.
void time_rounds(const std::vector<Path*>& paths, const std::function<void()>& drain) {
  size_t rounds = 0;
  for (auto* p : paths) {
    p->samples.clear();
    rounds = std::max(rounds, p->batches);
  }
  for (size_t r = 0; r < rounds; ++r) {
    for (auto* p : paths) {
      if (r >= p->batches) continue;
      p->samples.push_back(time_batch(*p));
      if (drain) drain();
    }
  }
}

std::string read_self_maps() {
  std::ifstream f("/proc/self/maps");
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The probe site of one calibration function: the file it is mapped from.
// Its entry bytes are not read back to check the path: while a probe is
// on it they are an int3 or a call, not the assembled instruction.
std::optional<uprobes::ProbeSite> site_of(const Path& p, const std::string& maps,
                                          std::string& error) {
  const auto addr = reinterpret_cast<uint64_t>(p.fn);
  auto m = mapping_of(maps, addr);
  if (!m) {
    error = std::string(p.name) + ": no file mapping holds the calibration function";
    return std::nullopt;
  }
  uprobes::ProbeSite s;
  s.id = p.id;
  s.name = p.name;
  s.path = m->path;
  s.module = m->path;
  s.address = addr;
  s.offset = m->offset;
  s.entry_path = p.expected;
  return s;
}

void add_error(std::string& all, const std::string& e) {
  if (e.empty()) return;
  all += (all.empty() ? "" : "; ") + e;
}

// Closing the links waits for an RCU grace period per link; nobody needs
// to wait for that. If no thread can be started, it is paid here. The thread
// blocks every signal: it starts before the recorder blocks SIGINT and
// takes it through a signalfd, and a Ctrl-C delivered to this thread
// (perf-event links take seconds to close on 6.1) would kill the recorder.
void detach_in_background(std::unique_ptr<FunctionProbes> probes) {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  try {
    std::thread([p = std::move(probes)]() mutable { p.reset(); }).detach();
  } catch (const std::exception&) {
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

void run(bpf_program* entry, bpf_program* exit, const CalibrationOptions& opts, ProbeCost& cost) {
  if (!entry || !exit) {
    cost.error = "no BPF programs";
    return;
  }
  const size_t fast = calls_per_batch(opts.ring_bytes, 256);
  std::vector<Path> paths = {
      {"nop5", atrace_calibrate_nop5, formats::ProbePath::Nop5, 16, fast, &cost.nop5_ns,
       &cost.nop5_inside_ns},
      {"emulated", atrace_calibrate_push, formats::ProbePath::Emulated, 16, fast, &cost.emulated_ns,
       &cost.emulated_inside_ns},
  };
  // ~15 us a hit here: a few hundred calls are enough and cost ~5 ms.
  if (opts.single_step)
    paths.push_back({"single-step", atrace_calibrate_mov, formats::ProbePath::SingleStep, 8,
                     calls_per_batch(opts.ring_bytes, 32), &cost.single_step_ns,
                     &cost.single_step_inside_ns});
  for (size_t i = 0; i < paths.size(); ++i)
    paths[i].id = kCalibrationProbeId + static_cast<uint32_t>(i);

  const std::string maps = read_self_maps();
  std::vector<uprobes::ProbeSite> sites;
  std::vector<Path*> measured;
  for (auto& p : paths) {
    std::string err;
    if (auto s = site_of(p, maps, err)) {
      sites.push_back(std::move(*s));
      measured.push_back(&p);
    }
    add_error(cost.error, err);
  }
  if (sites.empty()) return;

  for (auto* p : measured) p->fn(0);  // paged in before timing
  time_rounds(measured, nullptr);
  for (auto* p : measured) p->baseline = lower_quartile_per_call(p->samples, p->calls);

  auto probes = std::make_unique<FunctionProbes>(entry, exit, getpid(), opts.multi);
  auto failures = probes->attach(sites);
  for (auto* p : measured) {
    p->attached = std::none_of(failures.begin(), failures.end(),
                               [&](const AttachFailure& f) { return f.site->name == p->name; });
  }
  for (const auto& f : failures) add_error(cost.error, f.site->name + ": " + f.reason);

  std::vector<Path*> probed;
  for (auto* p : measured) {
    if (!p->attached) continue;
    // The first hits optimize the NOP5 site and map the return trampoline.
    for (long i = 0; i < 8; ++i) p->fn(i);
    probed.push_back(p);
  }
  if (opts.drain) opts.drain();
  if (opts.records) opts.records->clear();
  time_rounds(probed, opts.drain);
  for (auto* p : probed) {
    *p->result = added_cost_ns(lower_quartile_per_call(p->samples, p->calls), p->baseline);
    if (*p->result == 0) add_error(cost.error, std::string(p->name) + ": no measurable cost");
    // The interval minus what the empty function itself takes.
    if (opts.records)
      *p->inside =
          added_cost_ns(static_cast<double>(opts.records->median_interval(p->id)), p->baseline);
  }
  detach_in_background(std::move(probes));
}

}  // namespace

ProbeCost calibrate_probe_cost(bpf_program* entry, bpf_program* exit,
                               const CalibrationOptions& opts) {
  ProbeCost cost;
  const uint64_t t0 = now_ns(CLOCK_MONOTONIC);
  try {
    run(entry, exit, opts, cost);
  } catch (const std::exception& e) {
    cost = ProbeCost{};
    cost.error = e.what();
  }
  cost.took_ns = now_ns(CLOCK_MONOTONIC) - t0;
  return cost;
}

}  // namespace atrace
