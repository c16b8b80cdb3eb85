#include "record/relevance.h"

#include "base/diagnostics.h"
#include "base/symbol_name.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "base/plural.h"
#include "record/fast_path.h"
#include "record/hot_switch.h"
#include "record/record_error.h"

namespace atrace {

namespace {

// Sampling the statistics costs a map read per CPU and function: a few
// times per second is enough unless a program hints.
constexpr uint64_t kTickNs = 100'000'000;
// --fast-path=hot: a function the switch found with a call in flight at
// each of its stops stays on the kernel's probes and is tried again at
// each wake-up for this long before it is detached (two threads calling
// it in turn keep a call in flight most of the time; a few milliseconds
// later one stop finds it clear).
constexpr uint64_t kBusyRetryNs = 1'000'000'000;

}  // namespace

RelevanceRun::RelevanceRun(const FilterOptions& o, FunctionProbes& probes, int state_fd,
                           int stat_fd, int ncpus, pid_t pid,
                           const std::vector<formats::ProbeInfo>& table,
                           const std::vector<uint32_t>& keep, std::vector<uint64_t> floor_ns,
                           std::vector<uint64_t> cost_ns)
    : o_(o),
      policy_(o, std::move(floor_ns)),
      cost_ns_(std::move(cost_ns)),
      stat_fd_(stat_fd),
      ncpus_(ncpus),
      pid_(pid) {
  uint32_t max_id = 0;
  for (const auto& p : table) max_id = std::max(max_id, p.id);
  table_.resize(max_id + 1);
  for (const auto& p : table) table_[p.id] = p;
  for (uint32_t id : keep) policy_.keep(id);
  state_len_ = max_id + 1;
  state_map_ = MapMemory(state_fd, state_len_ * sizeof(atrace_fn_state), "the filter state map");
  state_ = static_cast<atrace_fn_state*>(state_map_.get());
  detacher_ = std::make_unique<Detacher>(probes, state_, state_len_, stat_fd, ncpus);
  last_cpu_ = traced_cpu_ns();
}

RelevanceRun::~RelevanceRun() {
  detacher_.reset();  // before the mapping it writes to goes
}

// The traced process's CPU time in ns: its CPU-time clock, exact (the
// budget is judged every 100 ms, on runs of a few hundred: /proc's clock
// ticks of 10 ms were too coarse for that), or utime + stime from /proc
// where the clock cannot be had.
uint64_t RelevanceRun::traced_cpu_ns() {
  clockid_t clock;
  timespec t{};
  if (clock_getcpuclockid(pid_, &clock) == 0 && clock_gettime(clock, &t) == 0)
    return static_cast<uint64_t>(t.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(t.tv_nsec);
  std::ifstream in("/proc/" + std::to_string(pid_) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return 0;
  auto close = line.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(line.substr(close + 2));
  std::string field;
  uint64_t utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  return (utime + stime) * (1'000'000'000ull / static_cast<uint64_t>(sysconf(_SC_CLK_TCK)));
}

// Every function's per-CPU numbers in one system call (2,000 lookups took
// a few ms of each decision), one lookup per function where the kernel
// has no batch operation for the map.
bool RelevanceRun::read_all_stats(std::vector<atrace_fn_stat>& all) {
  const size_t ncpus = static_cast<size_t>(ncpus_);
  all.assign(state_len_ * ncpus, atrace_fn_stat{});
  std::vector<uint32_t> keys(state_len_);
  uint32_t next = 0;
  __u32 count = static_cast<__u32>(state_len_);
  LIBBPF_OPTS(bpf_map_batch_opts, opts);
  int err = bpf_map_lookup_batch(stat_fd_, nullptr, &next, keys.data(), all.data(), &count, &opts);
  if ((err == 0 || errno == ENOENT) && count == state_len_) return true;
  return false;
}

std::vector<FunctionSample> RelevanceRun::sample() {
  std::vector<FunctionSample> out;
  const size_t ncpus = static_cast<size_t>(ncpus_);
  std::vector<atrace_fn_stat> all;
  const bool batched = read_all_stats(all);
  std::vector<atrace_fn_stat> v(ncpus);
  for (uint32_t id = 1; id < state_len_; ++id) {
    if (table_[id].id != id || policy_.decided(id)) continue;
    FunctionSample s;
    s.id = id;
    s.path = table_[id].path_kind;
    switch (__atomic_load_n(&state_[id].off, __ATOMIC_SEQ_CST)) {
      case ATRACE_OFF_MAX_CALLS: s.off = DetachReason::MaxCalls; break;
      case ATRACE_OFF_THRESHOLD: s.off = DetachReason::Absolute; break;
      default: break;
    }
    s.entries = __atomic_load_n(&state_[id].calls, __ATOMIC_RELAXED);
    const atrace_fn_stat* per_cpu = nullptr;
    if (batched) per_cpu = &all[id * ncpus];
    else if (bpf_map_lookup_elem(stat_fd_, &id, v.data()) == 0) per_cpu = v.data();
    for (size_t c = 0; per_cpu && c < ncpus; ++c) {
      s.calls += per_cpu[c].calls;
      s.sum_ns += per_cpu[c].sum_ns;
    }
    out.push_back(s);
  }
  return out;
}

std::vector<formats::Event> RelevanceRun::tick(uint64_t now) {
  std::vector<formats::Event> events;
  detacher_->poll(now);
  if (!due_ && now - last_tick_ < kTickNs) return events;
  due_ = false;
  last_tick_ = now;
  uint64_t cpu = o_.budget_pct > 0 ? traced_cpu_ns() : 0;
  uint64_t cpu_delta = cpu > last_cpu_ ? cpu - last_cpu_ : 0;
  last_cpu_ = cpu;
  auto decisions = policy_.decide(sample(), cpu_delta, cost_ns_);
  for (const auto& [id, b] : busy_) decisions.push_back(b.decision);
  if (decisions.empty()) return events;
  // --fast-path=hot: those decided for their cost go to the fast path
  // instead, where they can; what it cannot take is detached below.
  std::vector<uint32_t> to_patch;
  for (const auto& d : decisions)
    if (fast_ && fast_->patchable(d.id) &&
        (d.reason == DetachReason::Absolute || d.reason == DetachReason::Relative ||
         d.reason == DetachReason::Budget))
      to_patch.push_back(d.id);
  HotSwitchResult hot;
  std::set<uint32_t> retry;  // busy: tried again at the next wake-ups
  if (!to_patch.empty()) {
    hot = patch_instead(pid_, *fast_, *detacher_, to_patch, now);
    for (uint32_t id : hot.patched) busy_.erase(id);
    for (uint32_t id : hot.detached) busy_.erase(id);
    for (uint32_t id : hot.busy) {
      const auto d = std::find_if(decisions.begin(), decisions.end(),
                                  [id](const FilterDecision& x) { return x.id == id; });
      auto [b, fresh] = busy_.try_emplace(id, Busy{*d, now});
      if (now - b->second.since < kBusyRetryNs) retry.insert(id);
      else busy_.erase(b);
    }
    if (!retry.empty()) due_ = true;
    patched_ += hot.patched.size();
    const size_t given_up = hot.busy.size() - retry.size() + hot.detached.size();
    not_patched_ += given_up;
    if (given_up && !hot.error.empty())
      base::warning("--fast-path=hot: %s not patched, detached instead: %s",
                    base::plural(given_up, "function").c_str(), hot.error.c_str());
  }
  auto among = [](const std::vector<uint32_t>& v, uint32_t id) {
    return std::find(v.begin(), v.end(), id) != v.end();
  };
  std::vector<uint32_t> ids;
  for (const auto& d : decisions) {
    if (retry.count(d.id)) continue;  // still on the kernel's probes, undecided
    const bool patched = among(hot.patched, d.id);
    // Off the kernel's probes already: patched, or detached by the switch.
    if (!patched && !among(hot.detached, d.id)) ids.push_back(d.id);
    formats::Event ev;
    ev.ts = now;
    ev.pid = static_cast<uint32_t>(pid_);
    ev.tid = 0;
    ev.kind = formats::EventKind::Detach;
    ev.id = d.id;
    ev.flags = static_cast<uint8_t>(patched ? DetachReason::PatchedInstead : d.reason);
    ev.arg0 = d.calls;
    ev.arg1 = d.sum_ns;
    events.push_back(ev);
    const auto& p = table_[d.id];
    if (patched) {
      base::progress(
          "patched %s instead of detaching it (%s: %llu calls, %s; the program "
          "stopped %.2f ms)",
          base::short_name(p.name).c_str(), formats::to_string(d.reason),
          static_cast<unsigned long long>(d.calls), d.rule.c_str(),
          static_cast<double>(hot.held_ns) / 1e6);
      continue;
    }
    detached_.push_back(p);
    // The short name reports use, and the comparison that decided.
    base::progress("detached %s (%s: %llu calls, %s)", base::short_name(p.name).c_str(),
                   formats::to_string(d.reason), static_cast<unsigned long long>(d.calls),
                   d.rule.c_str());
  }
  if (ids.empty()) return events;
  std::string error;
  detacher_->detach(ids, now, error);
  // A short function's calls in flight end within microseconds: wait for
  // them a little here (the recorder's thread, never a traced one) so its
  // probes go now rather than at the next tick.
  for (int i = 0; i < 20 && detacher_->pending(); ++i) {
    detacher_->poll(now);
    if (detacher_->pending()) usleep(250);
  }
  if (!error.empty())
    base::warning(
        "could not re-attach without a detached function (%s): its "
        "probes stay until the end, silenced",
        error.c_str());
  return events;
}

void RelevanceRun::finish() { detacher_->finish(); }

std::string RelevanceRun::summary() const {
  const auto& t = detacher_->timings();
  std::string hot;
  if (fast_)
    hot = "; --fast-path=hot: " + base::plural(patched_, "function") +
          " patched instead of detached" +
          (not_patched_ ? " (" + std::to_string(not_patched_) + " could not be, detached)" : "");
  if (t.empty()) return hot.empty() ? hot : hot.substr(2);
  std::vector<uint64_t> gone;
  for (const auto& x : t)
    if (x.exit_gone > x.decided) gone.push_back(x.exit_gone - x.decided);
  std::sort(gone.begin(), gone.end());
  std::string s =
      "relevance filter detached " + std::to_string(t.size() - patched_) + " function(s)";
  if (!gone.empty()) {
    char b[128];
    std::snprintf(b, sizeof b, "; decision to probes gone: median %.1f ms, max %.1f ms",
                  static_cast<double>(gone[gone.size() / 2]) / 1e6,
                  static_cast<double>(gone.back()) / 1e6);
    s += b;
  }
  return s + hot;
}

}  // namespace atrace
