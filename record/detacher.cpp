#include "record/detacher.h"

#include <bpf/bpf.h>
#include <time.h>

#include <algorithm>
#include <functional>
#include <map>

#include "base/clock.h"

namespace atrace {

namespace {

uint64_t mono_now() { return now_ns(CLOCK_MONOTONIC); }

// fn_state is shared with the programs: plain stores the compiler may not
// drop or reorder past the link operations that follow.
void store(uint32_t& field, uint32_t v) { __atomic_store_n(&field, v, __ATOMIC_SEQ_CST); }

}  // namespace

LinkCloser::~LinkCloser() { drain(); }

void LinkCloser::close_later(OwnedLink link, uint64_t* started, uint64_t* closed) {
  // The start is stamped here: the probes go as the close begins.
  const uint64_t t0 = mono_now();
  if (started) *started = t0;
  std::lock_guard<std::mutex> l(mu_);
  threads_.emplace_back([link = std::move(link), closed]() mutable {
    link.close();
    if (closed) *closed = mono_now();
  });
}

void LinkCloser::drain() {
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> l(mu_);
    threads.swap(threads_);
  }
  for (auto& t : threads) t.join();
}

Detacher::Detacher(FunctionProbes& probes, atrace_fn_state* state, size_t n, int stat_fd, int ncpus)
    : probes_(probes), state_(state), n_(n), stat_fd_(stat_fd), ncpus_(ncpus) {}

Detacher::~Detacher() { finish(); }

int64_t Detacher::in_flight(uint32_t id) const {
  std::vector<atrace_fn_stat> v(static_cast<size_t>(ncpus_));
  if (bpf_map_lookup_elem(stat_fd_, &id, v.data()) != 0) return 0;
  int64_t open = 0;
  for (const auto& s : v) open += s.open;  // an entry on one CPU, its exit on another
  return open;
}

void Detacher::detach(const std::vector<uint32_t>& ids, uint64_t now, std::string& error) {
  std::map<int, std::vector<uint32_t>> by_group;
  for (uint32_t id : ids) {
    if (id >= n_) continue;
    store(state_[id].off, 1);  // 1. entries stop now
    by_group[probes_.group_of(id)].push_back(id);
  }
  struct Rebuild {
    int g;
    std::vector<uint32_t> ids;
    std::vector<size_t> slots;
    RetiredLinks old;
    std::string err;
  };
  std::vector<Rebuild> rebuilds;
  for (auto& [g, group_ids] : by_group) {
    std::vector<size_t> slots;
    for (uint32_t id : group_ids) {
      slots.push_back(timing_store_.size());
      timing_store_.push_back({id, now, 0, 0, 0});
    }
    if (g >= 0) rebuilds.push_back({g, group_ids, slots, {}, {}});
  }
  // 2. each group again, without every function that is off by now; the
  // groups at once, each on a thread: a rebuild mostly waits (for an RCU
  // grace period when the kernel's uprobe registration lock comes out of
  // its reader mode), and concurrent rebuilds share the wait. 3. the old
  // entry link closes as soon as its group is rebuilt.
  auto drop = [this](uint32_t id) {
    return id < n_ && __atomic_load_n(&state_[id].off, __ATOMIC_SEQ_CST);
  };
  auto switch_gen = [this](uint32_t id, uint32_t gen) {
    if (id < n_) store(state_[id].gen, gen);
  };
  auto rebuild = [&](Rebuild& r) {
    r.old = probes_.rebuild_without(r.g, drop, switch_gen, r.err);
    if (r.err.empty())
      closer_.close_later(std::move(r.old.entry), &timing_store_[r.slots.front()].entry_gone,
                          nullptr);
  };
  std::vector<std::thread> threads;
  for (size_t i = 1; i < rebuilds.size(); ++i) threads.emplace_back(rebuild, std::ref(rebuilds[i]));
  if (!rebuilds.empty()) rebuild(rebuilds.front());
  for (auto& t : threads) t.join();
  // 4. the return link when no call is in flight (poll).
  for (auto& r : rebuilds) {
    if (!r.err.empty()) {
      error = r.err;
      continue;
    }
    parked_.push_back({std::move(r.old.exit), std::move(r.ids), std::move(r.slots), now});
  }
}

bool Detacher::can_close_now(const std::vector<uint32_t>& ids) const {
  std::vector<int> groups;
  for (uint32_t id : ids) {
    const int g = id < n_ ? probes_.group_of(id) : -1;
    if (g < 0) return false;
    groups.push_back(g);
    if (in_flight(id) > 0) return false;
  }
  // Every function of their groups, kept ones too: the group is re-attached
  // with new links, and a call in flight of a kept function whose old
  // return link closes would lose its exit (seen: the C target's other(),
  // 199 of 200, its thread inside nanosleep at the switch).
  for (uint32_t id = 0; id < n_; ++id) {
    if (std::find(groups.begin(), groups.end(), probes_.group_of(id)) == groups.end()) continue;
    if (in_flight(id) > 0) return false;
  }
  return true;
}

void Detacher::detach_now(const std::vector<uint32_t>& ids, uint64_t now, std::string& error) {
  const size_t before = parked_.size();
  detach(ids, now, error);
  // No call in flight (can_close_now): nothing needs the old return links.
  for (size_t i = before; i < parked_.size(); ++i) retire_exit(parked_[i]);
  parked_.erase(parked_.begin() + static_cast<std::ptrdiff_t>(before), parked_.end());
}

void Detacher::retire_exit(Parked& p) {
  Timing& t = timing_store_[p.slots.front()];
  closer_.close_later(std::move(p.exit), &t.exit_gone, &t.closed);
}

void Detacher::poll(uint64_t now) {
  for (auto it = parked_.begin(); it != parked_.end();) {
    bool done = now - it->since >= kMaxWaitNs;
    if (!done) {
      done = true;
      for (uint32_t id : it->ids)
        if (in_flight(id) > 0) done = false;
    }
    if (!done) {
      ++it;
      continue;
    }
    retire_exit(*it);
    it = parked_.erase(it);
  }
}

void Detacher::finish() {
  for (auto& p : parked_) retire_exit(p);
  parked_.clear();
  // No drain here: the closes return once every probe is gone, which is
  // the recorder's detach_all after this (the destructor waits for them).
  // Every function of a group shares its group's link times.
  timings_.clear();
  for (size_t i = 0; i < timing_store_.size(); ++i) timings_.push_back(timing_store_[i]);
  for (auto& t : timings_) {
    for (const auto& u : timing_store_)
      if (u.decided == t.decided && u.entry_gone) {
        t.entry_gone = std::max(t.entry_gone, u.entry_gone);
        t.exit_gone = std::max(t.exit_gone, u.exit_gone);
        t.closed = std::max(t.closed, u.closed);
      }
  }
}

}  // namespace atrace
