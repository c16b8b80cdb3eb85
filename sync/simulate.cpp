#include "sync/simulate.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <set>
#include <stdexcept>

namespace atrace::sync {

namespace {

constexpr int64_t kUptimeNs = 1'000'000'000'000;         // hosts booted ~1000 s ago
constexpr int64_t kEpochNs = 1'790'000'000'000'000'000;  // REALTIME of true time 0

class Rng {
 public:
  explicit Rng(uint64_t seed) : g_(seed) {}
  double uniform(double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(g_);
  }
  double exponential(double mean) { return std::exponential_distribution<double>(1.0 / mean)(g_); }
  int sign() { return uniform(0, 1) < 0.5 ? -1 : 1; }
  size_t index(size_t n) { return static_cast<size_t>(uniform(0, static_cast<double>(n))) % n; }

 private:
  std::mt19937_64 g_;
};

struct Event {
  int64_t true_ns;
  int msg;  // -1: not a message
  bool recv;
};

std::vector<std::pair<HostIndex, HostIndex>> make_links(uint32_t n, uint32_t extra, Rng& rng) {
  std::set<std::pair<HostIndex, HostIndex>> links;
  auto add = [&](HostIndex x, HostIndex y) {
    if (x != y) links.insert({std::min(x, y), std::max(x, y)});
  };
  if (n <= 4) {
    for (HostIndex a = 0; a < n; ++a)
      for (HostIndex b = a + 1; b < n; ++b) add(a, b);
  } else {
    for (HostIndex a = 0; a < n; ++a) {
      add(a, (a + 1) % n);
      for (uint32_t k = 0; k < extra; ++k) add(a, static_cast<HostIndex>(rng.index(n)));
    }
  }
  return {links.begin(), links.end()};
}

}  // namespace

int64_t SimClock::local(int64_t t) const {
  if (change_at_ns < 0 || t <= change_at_ns)
    return base_ns + static_cast<int64_t>(std::llround(rate1 * static_cast<double>(t)));
  double at_change = rate1 * static_cast<double>(change_at_ns);
  return base_ns + static_cast<int64_t>(
                       std::llround(at_change + rate2 * static_cast<double>(t - change_at_ns)));
}

Simulation simulate(const SimOptions& o) {
  Rng rng(o.seed);
  Simulation sim;
  const uint32_t n = o.hosts;
  for (uint32_t h = 0; h < n; ++h) {
    SimClock c;
    c.base_ns =
        kUptimeNs + static_cast<int64_t>(rng.uniform(-1, 1) * static_cast<double>(o.max_offset_ns));
    c.rate1 = 1 + rng.sign() * rng.uniform(o.min_drift_ppm, o.max_drift_ppm) * 1e-6;
    c.rate2 = c.rate1;
    if (o.slew_at_ns >= 0) {
      c.change_at_ns = o.slew_at_ns;
      c.rate2 = c.rate1 + rng.sign() * rng.uniform(0.5, 1.0) * o.slew_ppm * 1e-6;
    }
    sim.clocks.push_back(c);
    HostClock hc;
    hc.name = "host" + std::to_string(h);
    hc.boot_id = "boot-" + std::to_string(h);
    sim.input.hosts.push_back(hc);
  }
  sim.links = make_links(n, o.extra_links, rng);

  // Messages, both directions of every link.
  std::vector<std::vector<Event>> events(n);
  std::vector<MatchedMessage> matched;
  for (auto [a, b] : sim.links) {
    for (auto [from, to] : {std::pair(a, b), std::pair(b, a)}) {
      double lo = std::log(static_cast<double>(o.min_delay_ns));
      double hi = std::log(static_cast<double>(o.max_delay_ns) / 2);
      int64_t dmin = static_cast<int64_t>(std::exp(rng.uniform(lo, hi)));
      double jitter_mean = rng.uniform(o.min_jitter, o.max_jitter) * static_cast<double>(dmin);
      sim.min_delay_ns[{from, to}] = dmin;
      DirectedMessages dm{from, to, {}};
      double t = rng.exponential(static_cast<double>(o.message_interval_ns));
      while (t < static_cast<double>(o.duration_ns)) {
        int64_t send = static_cast<int64_t>(t);
        int64_t jitter =
            std::min(static_cast<int64_t>(rng.exponential(jitter_mean)), o.max_delay_ns - dmin);
        int64_t recv = send + dmin + jitter;
        int id = static_cast<int>(matched.size());
        matched.push_back(MatchedMessage{from, 0, to, 0});
        events[from].push_back(Event{send, id, false});
        events[to].push_back(Event{recv, id, true});
        dm.samples.push_back(
            MessageSample{sim.clocks[from].local(send), sim.clocks[to].local(recv)});
        t += rng.exponential(static_cast<double>(o.message_interval_ns));
      }
      sim.input.messages.push_back(std::move(dm));
    }
  }
  // Other events, and each host's events in order.
  sim.event_local.resize(n);
  sim.event_true.resize(n);
  for (uint32_t h = 0; h < n; ++h) {
    for (double t = rng.exponential(static_cast<double>(o.event_interval_ns));
         t < static_cast<double>(o.duration_ns);
         t += rng.exponential(static_cast<double>(o.event_interval_ns)))
      events[h].push_back(Event{static_cast<int64_t>(t), -1, false});
    std::stable_sort(events[h].begin(), events[h].end(),
                     [](const Event& x, const Event& y) { return x.true_ns < y.true_ns; });
    for (size_t i = 0; i < events[h].size(); ++i) {
      const Event& e = events[h][i];
      sim.event_true[h].push_back(e.true_ns);
      sim.event_local[h].push_back(sim.clocks[h].local(e.true_ns));
      if (e.msg < 0) continue;
      if (e.recv) matched[e.msg].recv_event = i;
      else matched[e.msg].send_event = i;
    }
  }
  sim.matched = std::move(matched);

  // REALTIME snapshots: each host's NTP error fixed for the run, within
  // the maxerror its kernel states; brackets of 1-3 us.
  for (uint32_t h = 0; h < n; ++h) {
    double err = rng.uniform(-1, 1) * static_cast<double>(o.max_realtime_error_ns);
    int64_t maxerror_us = static_cast<int64_t>(std::fabs(err) * 1.25 / 1000) + 100;
    for (int64_t t = 0; t <= o.duration_ns; t += o.snapshot_interval_ns) {
      int64_t w1 = static_cast<int64_t>(rng.uniform(500, 1500));
      int64_t w2 = static_cast<int64_t>(rng.uniform(500, 1500));
      ClockSnapshot s;
      s.mono_before_ns = sim.clocks[h].local(t - w1);
      s.mono_after_ns = sim.clocks[h].local(t + w2);
      s.realtime_ns = kEpochNs + t + static_cast<int64_t>(err);
      s.maxerror_us = maxerror_us;
      s.esterror_us = static_cast<int64_t>(std::fabs(err) / 1000);
      sim.input.hosts[h].snapshots.push_back(s);
    }
  }
  return sim;
}

SimScore score(const Simulation& sim, const std::vector<HostCorrection>& hosts) {
  SimScore s;
  const SimClock& ref = sim.clocks[sim.input.options.reference];
  for (size_t h = 0; h < hosts.size(); ++h) {
    for (size_t i = 0; i < sim.event_local[h].size(); ++i) {
      int64_t local = sim.event_local[h][i];
      int64_t err = std::abs(map_time(hosts[h].segments, local) - ref.local(sim.event_true[h][i]));
      s.max_error_ns = std::max(s.max_error_ns, err);
      if (err > bound_at(hosts[h].segments, local)) ++s.outside_bounds;
      ++s.events;
    }
  }
  for (auto [a, b] : sim.links) {
    LinkScore l{a, b, 0, (sim.min_delay_ns.at({a, b}) + sim.min_delay_ns.at({b, a})) / 2};
    for (HostIndex h : {a, b}) {
      for (int64_t t : sim.event_true[h]) {
        int64_t ca = map_time(hosts[a].segments, sim.clocks[a].local(t));
        int64_t cb = map_time(hosts[b].segments, sim.clocks[b].local(t));
        l.max_error_ns = std::max(l.max_error_ns, std::abs(ca - cb));
      }
    }
    s.links.push_back(l);
  }
  return s;
}

int64_t pair_error(const Simulation& sim, HostIndex a, HostIndex b, const Segments& b_to_a) {
  int64_t worst = 0;
  for (HostIndex h : {a, b}) {
    for (int64_t t : sim.event_true[h]) {
      int64_t err = map_time(b_to_a, sim.clocks[b].local(t)) - sim.clocks[a].local(t);
      worst = std::max(worst, std::abs(err));
    }
  }
  return worst;
}

Segments averaged_offset(const std::vector<MessageSample>& a_to_b,
                         const std::vector<MessageSample>& b_to_a) {
  auto mean = [](const std::vector<MessageSample>& v) {
    long double sum = 0;
    for (const auto& m : v) sum += static_cast<long double>(m.recv_ns - m.send_ns);
    return v.empty() ? 0.0L : sum / static_cast<long double>(v.size());
  };
  int64_t offset = static_cast<int64_t>(std::llround((mean(b_to_a) - mean(a_to_b)) / 2));
  return {Segment{0, offset, 0, 0}};
}

const std::vector<MessageSample>& samples(const Simulation& sim, HostIndex from, HostIndex to) {
  for (const auto& d : sim.input.messages)
    if (d.from == from && d.to == to) return d.samples;
  throw std::out_of_range("no such link");
}

std::vector<std::vector<int64_t>> corrected_events(const Simulation& sim,
                                                   const std::vector<HostCorrection>& hosts) {
  std::vector<std::vector<int64_t>> out(hosts.size());
  for (size_t h = 0; h < hosts.size(); ++h)
    for (int64_t local : sim.event_local[h]) out[h].push_back(map_time(hosts[h].segments, local));
  return out;
}

}  // namespace atrace::sync
