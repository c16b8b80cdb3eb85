#include "record/hot_switch.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "base/clock.h"
#include "fastpath/inject/code_patch.h"
#include "fastpath/inject/inject_error.h"
#include "fastpath/inject/stopped_process.h"
#include "record/detacher.h"
#include "record/fast_path.h"
#include "record/record_error.h"

namespace atrace {

namespace fp = fastpath;

namespace {

// Stops tried before the functions are detached as usual: a short function
// is rarely in flight at a stop.
constexpr int kAttempts = 20;
constexpr auto kRunBetween = std::chrono::microseconds(500);
// How long the closes may take to remove the breakpoints (they begin at
// once; the kernel removes the int3 before it waits for grace periods).
constexpr uint64_t kBreakpointWaitNs = 2'000'000'000;
// No thread may resume inside the bytes the jump replaces: more than the
// jump's 5, a thread there only costs a retry.
constexpr uint64_t kEntryBytes = 16;
// Instructions a thread inside an entry is stepped at most.
constexpr int kMaxSteps = 64;

}  // namespace

HotSwitchResult patch_instead(pid_t pid, FastPath& fast, Detacher& detacher,
                              const std::vector<uint32_t>& ids, uint64_t now) {
  HotSwitchResult r;
  if (ids.empty()) return r;
  // Every check and write below with this one stop: one try, no restop
  // (a restop would let threads run between the kernel's last entry and
  // the jump).
  const fp::RetryPolicy once{1, std::chrono::microseconds(0)};
  auto among = [](const std::vector<uint32_t>& v, uint32_t id) {
    return std::find(v.begin(), v.end(), id) != v.end();
  };
  std::vector<uint32_t> pending = ids;  // not switched yet, untouched
  std::vector<uint32_t> ready;          // this stop's: off the kernel's probes from step 2
  try {
    for (int attempt = 0; attempt < kAttempts && !pending.empty(); ++attempt) {
      fp::StoppedProcess process(pid);
      r.stops++;
      // 1. Nothing in the way: the jump needs its bytes clear of threads
      // (tested by set_enabled's own check too), and the return link must
      // be closable now.
      std::vector<fp::AddressRange> entries;
      entries.reserve(pending.size());
      for (uint32_t id : pending) entries.push_back({fast.entry(id), fast.entry(id) + kEntryBytes});
      // A thread inside an entry (the stop lands just past the kernel's
      // probe: the kernel holds a stop back until a probed instruction has
      // run), or with a call in flight (on its way back through the
      // kernel's return trampoline, say): the threads are stepped, one
      // instruction at a time, the others held, until one of the functions
      // is clear: a short function's few instructions.
      auto clear = [&](size_t i) {
        const fp::AddressRange one[] = {entries[i]};
        return !fp::thread_inside(process, one, {}) && detacher.can_close_now({pending[i]});
      };
      auto any_clear = [&] {
        for (size_t i = 0; i < pending.size(); ++i)
          if (clear(i)) return true;
        return false;
      };
      for (int steps = 0; steps < kMaxSteps && !any_clear(); ++steps) {
        if (const pid_t tid = fp::thread_inside(process, entries, {})) {
          if (!process.step(process.thread(tid))) break;
          continue;
        }
        bool stepped = false;
        for (const auto& t : process.threads()) stepped |= process.step(process.thread(t.tid));
        if (!stepped) break;
      }
      ready.clear();
      for (size_t i = 0; i < pending.size(); ++i)
        if (clear(i)) ready.push_back(pending[i]);
      if (ready.empty()) {
        process.release();
        std::this_thread::sleep_for(kRunBetween);
        continue;
      }
      std::erase_if(pending, [&](uint32_t id) { return among(ready, id); });
      // 2.
      std::string error;
      detacher.detach_now(ready, now, error);
      if (!error.empty()) {
        process.release();
        r.detached.insert(r.detached.end(), ready.begin(), ready.end());
        ready.clear();
        r.error = "could not re-attach without it: " + error;
        continue;
      }
      // 3 and 4: set_enabled writes an entry only when it holds the
      // original bytes (else "not what atrace wrote there"), so it is
      // tried until each is clear of the kernel's breakpoints.
      std::vector<uint32_t> todo = ready;
      const uint64_t deadline = now_ns(CLOCK_MONOTONIC) + kBreakpointWaitNs;
      std::string why;
      while (!todo.empty()) {
        FastPathSwitch sw = fast.set_enabled(process, todo, true, once);
        r.patched.insert(r.patched.end(), sw.switched.begin(), sw.switched.end());
        todo.clear();
        for (const auto& refusal : sw.refused) {
          todo.push_back(refusal.id);
          why = refusal.reason;
        }
        if (todo.empty() || now_ns(CLOCK_MONOTONIC) > deadline) break;
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
      process.release();
      r.held_ns = std::max(r.held_ns, static_cast<uint64_t>(process.times().held.count()));
      ready.clear();
      if (!todo.empty()) {
        r.detached.insert(r.detached.end(), todo.begin(), todo.end());
        r.error = "its entry still held the kernel's breakpoint after " +
                  std::to_string(kBreakpointWaitNs / 1'000'000) + " ms (" + why + ")";
      }
    }
  } catch (const fp::InjectError& e) {
    // Those of this stop past step 2 are off and their links gone, i.e.
    // detached as today (set_enabled changed nothing: all or nothing);
    // the others are untouched.
    r.error = e.what();
  } catch (const RecordError& e) {
    r.error = e.what();
  }
  for (uint32_t id : ready)
    if (!among(r.patched, id) && !among(r.detached, id)) r.detached.push_back(id);
  // Untouched: for the caller to detach.
  r.busy = pending;
  if (r.error.empty() && !r.busy.empty())
    r.error = "a call of it in flight (or a thread on its entry) at each of " +
              std::to_string(kAttempts) + " stops";
  return r;
}

}  // namespace atrace
