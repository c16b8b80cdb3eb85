// Switching fast-path functions off and on during a recording (issue 35:
// FastPath::set_enabled, docs/fast-path.md "Switching functions off and
// on"): a running multi-threaded program under load
// (tests/targets/target_fastpath_toggle.c: 4 workers on this VM's 2 CPUs,
// each calling tg_outer, which calls tg_leaf twice, and counting each call
// by the function's own first instruction) is patched and unpatched 1,000
// times. At every stop the test reads the workers' counts; then, for every
// window between a switch on and the next switch off, the entries recorded
// on each thread for each function equal the calls that thread counted;
// every entry has its exit, those of the calls in flight at a switch off
// included (they return through the stub after it); nothing is lost; the
// program never crashes and its result equals an untraced run's.
// Needs ptrace (root in CI); no BPF.
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <sstream>
#include <thread>

#include "base/clock.h"
#include "fastpath/inject/process_memory.h"
#include "fastpath/inject/stopped_process.h"
#include "record/fast_path.h"
#include "record/record_error.h"
#include "tests/integration/fixture.h"
#include "uprobes/proc_maps.h"
#include "uprobes/resolve.h"
#include "uprobes/selector.h"

namespace atrace::it {
namespace {

using namespace std::chrono_literals;

constexpr const char* kTarget = TARGET_FASTPATH_TOGGLE_BIN;
constexpr int kWorkers = 4;
constexpr int kWindows = 1000;
constexpr int kOuter = 0, kLeaf = 1;  // the counters' order in the target

// Each worker's calls so far: tg_outer's, tg_leaf's.
using Counts = std::vector<std::array<long, 2>>;

struct Target {
  pid_t pid = 0;
  uint64_t counters = 0, stride = 0;
  std::vector<uint32_t> tids;  // by worker
};

Target parse_ready(const std::string& line) {
  Target t;
  std::istringstream in(line);
  for (std::string word; in >> word;) {
    auto eq = word.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = word.substr(0, eq), value = word.substr(eq + 1);
    if (key == "pid") t.pid = std::stoi(value);
    else if (key == "counters") t.counters = std::stoull(value, nullptr, 16);
    else if (key == "stride") t.stride = std::stoull(value);
    else if (key == "tids") {
      std::istringstream list(value);
      for (std::string tid; std::getline(list, tid, ',');)
        t.tids.push_back(static_cast<uint32_t>(std::stoul(tid)));
    }
  }
  return t;
}

Counts read_counts(const Target& t) {
  fastpath::ProcessMemory memory(t.pid);
  Counts out(t.tids.size());
  for (size_t w = 0; w < out.size(); w++)
    memory.read(t.counters + w * t.stride, std::as_writable_bytes(std::span(out[w])));
  return out;
}

// The "worker W iterations=N sum=S" lines of an output, in order.
std::vector<std::string> worker_lines(const std::string& out) {
  std::vector<std::string> lines;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("worker ", 0) == 0) lines.push_back(line);
  return lines;
}

long long median(std::vector<long long> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

long long mean(const std::vector<long long>& v) {
  long long sum = 0;
  for (long long x : v) sum += x;
  return v.empty() ? 0 : sum / static_cast<long long>(v.size());
}

long long ms(std::chrono::steady_clock::duration d) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}

class FastPathToggle : public IntegrationTest {};

TEST_F(FastPathToggle, PatchedAndUnpatched1000TimesExactCountsPerWindow) {
  if (geteuid() != 0) {
    if (in_ci()) FAIL() << "needs root (ptrace)";
    GTEST_SKIP() << "needs root (ptrace)";
  }
  Child target({kTarget, std::to_string(kWorkers), tag_arg()});
  auto ready = target.wait_for_line("ready ", 10s);
  ASSERT_TRUE(ready) << target.out();
  const Target t = parse_ready(*ready);
  ASSERT_EQ(t.tids.size(), static_cast<size_t>(kWorkers)) << *ready;
  std::map<uint32_t, int> worker_of;
  for (int w = 0; w < kWorkers; w++) worker_of[t.tids[w]] = w;

  const auto sites = uprobes::resolve_probe_sites(uprobes::parse_selectors("tg_outer,tg_leaf"), {},
                                                  uprobes::process_modules(t.pid));
  ASSERT_EQ(sites.size(), 2u);
  std::map<uint32_t, int> function_of;  // probe id: kOuter or kLeaf
  for (const auto& s : sites) function_of[s.id] = s.name == "tg_outer" ? kOuter : kLeaf;

  FastPath fast(t.pid, sites, {});
  ASSERT_EQ(fast.patched().size(), 2u) << (fast.refused().empty() ? "" : fast.refused()[0].reason);
  const std::vector<uint32_t> ids = fast.patched();

  // A busy thread can sit in a trampoline at several stops in a row on a
  // loaded machine: more tries than the default before a switch gives up.
  const fastpath::RetryPolicy policy{200, 1000us};
  std::vector<long long> held_us;
  unsigned stops = 0, extra_stops = 0;
  // One stop: switch, then read the counts and the time while the program
  // is still held (the counts of the cut the switch made).
  auto switch_all = [&](bool on, Counts& counts, uint64_t& at) {
    fastpath::StoppedProcess process(t.pid);
    FastPathSwitch done = fast.set_enabled(process, ids, on, policy);
    counts = read_counts(t);
    at = now_ns(CLOCK_MONOTONIC);
    process.release();
    EXPECT_EQ(done.switched.size(), 2u);
    EXPECT_TRUE(done.refused.empty());
    held_us.push_back(process.times().held.count() / 1000);
    stops++;
    extra_stops += done.stops - 1;
  };

  struct Window {
    uint64_t on_ts = 0, off_ts = 0;
    Counts on, off;
  };
  // The function events by thread, in a compact form (a million or so),
  // taken after each drain; the other events counted.
  struct Call {
    uint64_t ts;
    uint32_t id;
    bool exit;
  };
  std::map<uint32_t, std::vector<Call>> by_thread;
  size_t others = 0, strangers = 0;
  std::vector<formats::Event> events;
  auto take = [&] {
    for (const formats::Event& ev : events) {
      const bool exit = ev.kind == formats::EventKind::FuncExit;
      if (!exit && ev.kind != formats::EventKind::FuncEntry) others++;
      else if (!worker_of.count(ev.tid) || !function_of.count(ev.id)) strangers++;
      else by_thread[ev.tid].push_back({ev.ts, ev.id, exit});
    }
    events.clear();
  };
  // The install switched everything on without a count: that first window
  // is closed at once and not checked (its calls still need their exits).
  Counts install_off;
  uint64_t install_off_ts = 0;
  switch_all(false, install_off, install_off_ts);
  std::vector<Window> windows(kWindows);
  // Where the test's own time goes (printed, not asserted).
  std::chrono::steady_clock::duration in_switches{}, in_drains{};
  const auto start = std::chrono::steady_clock::now();
  for (Window& w : windows) {
    auto t0 = std::chrono::steady_clock::now();
    switch_all(true, w.on, w.on_ts);
    auto t1 = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(1ms);
    auto t2 = std::chrono::steady_clock::now();
    switch_all(false, w.off, w.off_ts);
    auto t3 = std::chrono::steady_clock::now();
    fast.drain(events);
    take();
    in_switches += (t1 - t0) + (t3 - t2);
    in_drains += std::chrono::steady_clock::now() - t3;
    if (HasFailure()) break;
  }
  const auto loop = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(HasFailure());
  EXPECT_FALSE(fast.enabled(ids[0]));
  EXPECT_FALSE(fast.enabled(ids[1]));

  // The calls in flight at the last switch off return through the stub:
  // wait until every worker has started two more tg_outer calls.
  const Counts last = windows.back().off;
  for (int i = 0; i < 2000; i++) {
    Counts now = read_counts(t);
    bool all = true;
    for (int w = 0; w < kWorkers; w++) all &= now[w][kOuter] >= last[w][kOuter] + 2;
    if (all) break;
    std::this_thread::sleep_for(5ms);
  }
  fast.drain(events);
  fast.uninstall();
  do fast.drain(events);
  while (!fast.drained());
  take();
  const FastPathStats stats = fast.stats();
  EXPECT_EQ(stats.lost, 0u);
  EXPECT_EQ(stats.unknown_thread, 0u);

  // The program ends with the same result as untraced.
  target.signal(SIGUSR1);
  Result r = target.wait(30s);
  ASSERT_TRUE(r.exited(0)) << r.describe();
  const auto traced = worker_lines(r.out);
  ASSERT_EQ(traced.size(), static_cast<size_t>(kWorkers)) << r.out;
  std::vector<std::string> verify_argv{kTarget, "--verify"};
  for (const std::string& line : traced) {
    long iterations = 0;
    ASSERT_EQ(std::sscanf(line.c_str(), "worker %*d iterations=%ld", &iterations), 1) << line;
    verify_argv.push_back(std::to_string(iterations));
  }
  Child untraced(verify_argv);
  Result u = untraced.wait(60s);
  ASSERT_TRUE(u.exited(0)) << u.describe();
  EXPECT_EQ(worker_lines(u.out), traced);

  // Each entry to its window by its time: the program was stopped at both
  // ends, so no entry is near a window's edge.
  std::vector<Counts> recorded(kWindows, Counts(kWorkers, {0, 0}));
  size_t install_entries = 0, outside = 0, entries = 0, exits = 0;
  for (auto& [tid, calls] : by_thread) {
    for (const Call& c : calls) {
      if (c.exit) {
        exits++;
        continue;
      }
      entries++;
      if (c.ts < install_off_ts) {
        install_entries++;
        continue;
      }
      auto it = std::upper_bound(windows.begin(), windows.end(), c.ts,
                                 [](uint64_t ts, const Window& w) { return ts < w.on_ts; });
      if (it == windows.begin() || c.ts > std::prev(it)->off_ts) {
        outside++;
        continue;
      }
      recorded[std::prev(it) - windows.begin()][worker_of[tid]][function_of[c.id]]++;
    }
  }
  EXPECT_EQ(others, 0u) << "unwound or untimed calls: none expected";
  EXPECT_EQ(strangers, 0u) << "events of another thread or function";
  EXPECT_EQ(outside, 0u) << "entries recorded while the functions were off";
  size_t wrong = 0;
  long window_calls = 0;
  for (int k = 0; k < kWindows; k++) {
    for (int w = 0; w < kWorkers; w++) {
      for (int f : {kOuter, kLeaf}) {
        const long made = windows[k].off[w][f] - windows[k].on[w][f];
        window_calls += made;
        if (recorded[k][w][f] != made && wrong++ < 5)
          ADD_FAILURE() << "window " << k << ", worker " << w << ", "
                        << (f == kOuter ? "tg_outer" : "tg_leaf") << ": " << recorded[k][w][f]
                        << " entries recorded, " << made << " calls made";
      }
    }
  }
  EXPECT_EQ(wrong, 0u) << "windows with a wrong count";
  EXPECT_EQ(entries - install_entries, static_cast<size_t>(window_calls));

  // Every entry has its exit on its thread, nested as called; count the
  // calls whose exit came after their window's switch off (in flight then,
  // returned through the stub).
  size_t unmatched = 0, after_switch = 0;
  for (auto& [tid, calls] : by_thread) {
    // Drain order is time order but for a record that came a drain late.
    std::stable_sort(calls.begin(), calls.end(),
                     [](const Call& a, const Call& b) { return a.ts < b.ts; });
    std::vector<const Call*> open;
    for (const Call& c : calls) {
      if (!c.exit) {
        open.push_back(&c);
        continue;
      }
      if (open.empty() || open.back()->id != c.id) {
        unmatched++;
        continue;
      }
      const uint64_t entered = open.back()->ts;
      open.pop_back();
      auto it = std::upper_bound(windows.begin(), windows.end(), entered,
                                 [](uint64_t ts, const Window& w) { return ts < w.on_ts; });
      const uint64_t off = it == windows.begin() ? install_off_ts : std::prev(it)->off_ts;
      after_switch += c.ts > off;
    }
    unmatched += open.size();
  }
  EXPECT_EQ(unmatched, 0u);
  EXPECT_EQ(exits, entries);
  // The workers spend most of their time inside tg_outer, between its
  // calls: nearly every switch off finds tg_outer frames in flight.
  EXPECT_GT(after_switch, static_cast<size_t>(kWindows / 2));

  std::printf(
      "%d windows, %d workers: %zu entries and %zu exits recorded (%zu in the install's window), "
      "each window's count exact; %zu calls in flight at a switch off returned through the stub; "
      "%u stops (%u more while a thread was in the way), held median %lld us, mean %lld us, "
      "max %lld us; "
      "the loop took %lld ms (switches %lld ms, drains %lld ms)\n",
      kWindows, kWorkers, entries, exits, install_entries, after_switch, stops, extra_stops,
      median(held_us), mean(held_us), *std::max_element(held_us.begin(), held_us.end()), ms(loop),
      ms(in_switches), ms(in_drains));
}

// The edges of a switch: a function already in the state asked is left
// alone, an id not patched is refused, an entry someone else rewrote while
// it was off is not switched on (and theirs is kept), and the uninstall
// gives back every entry switched on, leaving the code as it was.
TEST_F(FastPathToggle, SwitchEdgesAndTheCodeGivenBack) {
  if (geteuid() != 0) {
    if (in_ci()) FAIL() << "needs root (ptrace)";
    GTEST_SKIP() << "needs root (ptrace)";
  }
  Child target({kTarget, "2", tag_arg()});
  auto ready = target.wait_for_line("ready ", 10s);
  ASSERT_TRUE(ready) << target.out();
  const Target t = parse_ready(*ready);
  const auto sites = uprobes::resolve_probe_sites(uprobes::parse_selectors("tg_outer,tg_leaf"), {},
                                                  uprobes::process_modules(t.pid));
  ASSERT_EQ(sites.size(), 2u);
  // Where each function is in the process, from the module's mapping.
  std::map<std::string, uint64_t> at;
  for (const auto& m : uprobes::file_mappings(t.pid)) {
    for (const auto& s : sites) {
      const uint64_t file_offset = s.offset - s.entry_delta;
      if (m.exec && m.id == uprobes::file_id(s.path) && file_offset >= m.offset &&
          file_offset < m.offset + (m.end - m.start))
        at[s.name] = m.start + (file_offset - m.offset);
    }
  }
  ASSERT_EQ(at.size(), 2u);
  fastpath::ProcessMemory memory(t.pid);
  auto code = [&](const std::string& fn) {
    std::array<std::byte, 8> bytes{};
    memory.read_any(at[fn], bytes);
    return bytes;
  };
  const auto outer_before = code("tg_outer"), leaf_before = code("tg_leaf");

  std::optional<FastPath> fast(std::in_place, t.pid, sites, std::vector<uprobes::UnwindPoint>{});
  ASSERT_EQ(fast->patched().size(), 2u);
  uint32_t leaf = 0, outer = 0;
  for (const auto& s : sites) (s.name == "tg_leaf" ? leaf : outer) = s.id;
  EXPECT_EQ(code("tg_leaf")[0], std::byte{0xe9});

  FastPathSwitch off = fast->set_enabled({leaf}, false);
  EXPECT_EQ(off.switched, std::vector<uint32_t>{leaf});
  EXPECT_GT(off.held_ns, 0u);
  EXPECT_EQ(code("tg_leaf"), leaf_before);
  EXPECT_FALSE(fast->enabled(leaf));
  EXPECT_TRUE(fast->enabled(outer));
  // Already off; 999 is no function of this recording.
  FastPathSwitch again = fast->set_enabled({leaf, 999}, false);
  EXPECT_TRUE(again.switched.empty());
  ASSERT_EQ(again.refused.size(), 1u);
  EXPECT_EQ(again.refused[0].id, 999u);
  EXPECT_EQ(again.refused[0].reason, "not patched");

  // Another tool rewrites tg_leaf's first instruction while it is off (a
  // 3-byte nop over `incq (%rdi)`: the program runs on, uncounted).
  const std::array<std::byte, 3> nop3{std::byte{0x0f}, std::byte{0x1f}, std::byte{0x00}};
  {
    fastpath::StoppedProcess stopped(t.pid);
    memory.write_any(at["tg_leaf"], nop3);
  }
  FastPathSwitch refused = fast->set_enabled({leaf, outer}, true);
  EXPECT_TRUE(refused.switched.empty()) << "tg_outer is on already";
  ASSERT_EQ(refused.refused.size(), 1u);
  EXPECT_EQ(refused.refused[0].id, leaf);
  EXPECT_EQ(refused.refused[0].reason, "its entry is not what atrace wrote there any more");
  EXPECT_EQ(code("tg_leaf")[0], std::byte{0x0f});
  // Put back, it switches on again.
  {
    fastpath::StoppedProcess stopped(t.pid);
    memory.write_any(at["tg_leaf"], std::span(leaf_before).first(3));
  }
  EXPECT_EQ(fast->set_enabled({leaf}, true).switched, std::vector<uint32_t>{leaf});
  EXPECT_EQ(code("tg_leaf")[0], std::byte{0xe9});

  // Off once more, then the uninstall: tg_outer (on) given back, tg_leaf
  // (off) left as it is; the code as before the recording.
  EXPECT_EQ(fast->set_enabled({leaf}, false).switched.size(), 1u);
  fast->uninstall();
  EXPECT_THROW(fast->set_enabled({leaf}, true), RecordError);
  fast.reset();
  EXPECT_EQ(code("tg_outer"), outer_before);
  EXPECT_EQ(code("tg_leaf"), leaf_before);

  target.signal(SIGUSR1);
  Result r = target.wait(30s);
  ASSERT_TRUE(r.exited(0)) << r.describe();
  EXPECT_EQ(worker_lines(r.out).size(), 2u) << r.out;
}

}  // namespace
}  // namespace atrace::it
