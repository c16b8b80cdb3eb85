#include "analysis/clock_merge.h"

#include <algorithm>
#include <map>

namespace atrace::analysis {
namespace {

// The repair's amortisation: how much faster than its clock a host's
// shifted events may move back to its corrected time line (sync/'s).
constexpr double kAmortization = 0.01;
constexpr int64_t kSecond = 1'000'000'000;

// A host's events that take part in the repair: the ends of messages
// between hosts, at the times synchronisation uses.
struct RepairPoint {
  int64_t raw = 0;     // on the host's own clock
  size_t message = 0;  // index into the cross-host matches
  bool send = false;
};

// Folds a host's repair shifts (shift[i] at raw[i], ascending) into its map:
// the map plus a piecewise-linear shift through the points, ramping from 0
// before the first shifted point and back to 0 after the last, at the
// repair's amortisation rate.
sync::Segments with_shifts(const sync::Segments& map, const std::vector<int64_t>& raw,
                           const std::vector<int64_t>& shift) {
  std::map<int64_t, int64_t> knots;  // raw -> shift there
  size_t first = raw.size(), last = 0;
  for (size_t i = 0; i < raw.size(); i++) {
    if (shift[i] == 0) continue;
    first = std::min(first, i);
    last = i;
  }
  if (first == raw.size()) return map;
  for (size_t i = first; i <= last; i++) knots[raw[i]] = std::max(knots[raw[i]], shift[i]);
  // Points just outside the shifted run keep their shift of 0.
  if (first > 0) knots.emplace(raw[first - 1], 0);
  if (last + 1 < raw.size()) knots.emplace(raw[last + 1], 0);
  const auto ramp = [](int64_t s) {
    return static_cast<int64_t>(static_cast<double>(s) / kAmortization);
  };
  if (first == 0) knots.emplace(raw[first] - ramp(shift[first]), 0);
  if (last + 1 == raw.size()) knots.emplace(raw[last] + ramp(shift[last]), 0);
  auto shift_at = [&](int64_t x) -> int64_t {
    auto hi = knots.lower_bound(x);
    if (hi == knots.end()) return int64_t{0};
    if (hi->first == x) return hi->second;
    if (hi == knots.begin()) return int64_t{0};
    auto lo = std::prev(hi);
    const double f =
        static_cast<double>(x - lo->first) / static_cast<double>(hi->first - lo->first);
    return lo->second + static_cast<int64_t>(f * static_cast<double>(hi->second - lo->second));
  };
  // The new map's knots: the shift's, the old map's segment starts, and
  // one a second beyond each end, so the map keeps its own slope there.
  std::vector<int64_t> xs;
  for (const auto& [x, s] : knots) xs.push_back(x);
  for (const auto& seg : map) xs.push_back(seg.start_ns);
  std::sort(xs.begin(), xs.end());
  xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
  xs.insert(xs.begin(), xs.front() - kSecond);
  xs.push_back(xs.back() + kSecond);
  std::vector<sync::Knot> out;
  std::vector<int64_t> bounds;
  for (int64_t x : xs) {
    out.push_back({x, sync::map_time(map, x) + shift_at(x)});
    bounds.push_back(sync::bound_at(map, x));
  }
  return sync::from_knots(out, bounds);
}

}  // namespace

sync::HostClock sync_clock(const formats::HostClocks& h) {
  sync::HostClock c;
  c.name = h.host_name;
  c.boot_id = h.boot_id;
  for (const auto& s : h.snapshots) {
    sync::ClockSnapshot o;
    o.mono_before_ns = static_cast<int64_t>(s.mono_before_ns);
    o.mono_after_ns = static_cast<int64_t>(s.mono_after_ns);
    o.realtime_ns = static_cast<int64_t>(s.real_ns);
    o.maxerror_us = static_cast<int64_t>(s.maxerror_us);
    o.esterror_us = static_cast<int64_t>(s.esterror_us);
    o.unsynchronised = !s.synchronised;
    c.snapshots.push_back(o);
  }
  return c;
}

formats::Corrections merge_clocks(const std::vector<formats::HostClocks>& hosts,
                                  const std::vector<MessageEnd>& ends,
                                  const ClockMergeOptions& options) {
  sync::SyncInput input;
  for (const auto& h : hosts) input.hosts.push_back(sync_clock(h));
  input.options.reference = options.reference;
  input.options.estimate_same_boot = options.estimate_same_boot;

  // Messages between different hosts: the evidence, and what the repair keeps causal.
  std::vector<MessageMatch> cross;
  std::map<std::pair<uint32_t, uint32_t>, size_t> direction;  // (from, to) -> input.messages
  for (const auto& m : match_messages(ends)) {
    const MessageEnd& s = ends[m.send];
    const MessageEnd& r = ends[m.recv];
    if (s.host == r.host) continue;
    cross.push_back(m);
    auto [it, fresh] = direction.try_emplace({s.host, r.host}, input.messages.size());
    if (fresh) input.messages.push_back({s.host, r.host, {}});
    input.messages[it->second].samples.push_back({send_departure(s), static_cast<int64_t>(r.ts)});
  }
  for (auto& d : input.messages)
    std::sort(d.samples.begin(), d.samples.end(),
              [](const sync::MessageSample& a, const sync::MessageSample& b) {
                return a.send_ns < b.send_ns;
              });
  sync::SyncResult result = sync::synchronize(input);

  // The repair, on every cross-host message end, in corrected time.
  std::vector<std::vector<RepairPoint>> points(hosts.size());
  for (size_t i = 0; i < cross.size(); i++) {
    const MessageEnd& s = ends[cross[i].send];
    const MessageEnd& r = ends[cross[i].recv];
    points[s.host].push_back({send_departure(s), i, true});
    points[r.host].push_back({static_cast<int64_t>(r.ts), i, false});
  }
  std::vector<std::vector<int64_t>> times(hosts.size());
  std::vector<sync::MatchedMessage> matched(cross.size());
  for (uint32_t h = 0; h < hosts.size(); h++) {
    auto& p = points[h];
    std::stable_sort(p.begin(), p.end(),
                     [](const RepairPoint& a, const RepairPoint& b) { return a.raw < b.raw; });
    for (size_t e = 0; e < p.size(); e++) {
      times[h].push_back(sync::map_time(result.hosts[h].segments, p[e].raw));
      auto& mm = matched[p[e].message];
      if (p[e].send) {
        mm.send_host = h;
        mm.send_event = e;
      } else {
        mm.recv_host = h;
        mm.recv_event = e;
      }
    }
  }
  const std::vector<std::vector<int64_t>> before = times;
  sync::RepairOptions repair_options;
  repair_options.default_min_delay_ns = options.min_delay_ns;
  repair_options.amortization = kAmortization;
  sync::RepairResult repair = sync::causal_repair(times, matched, repair_options);
  sync::note_repair(result.pairs, repair);

  formats::Corrections out;
  out.reference = options.reference;
  out.estimated = options.estimate_same_boot;
  out.min_delay_ns = options.min_delay_ns;
  out.messages = cross.size();
  out.pairs = result.pairs;
  for (uint32_t h = 0; h < hosts.size(); h++) {
    formats::MergedHost m;
    std::vector<int64_t> raw, shift;
    for (size_t e = 0; e < points[h].size(); e++) {
      raw.push_back(points[h][e].raw);
      shift.push_back(times[h][e] - before[h][e]);
    }
    m.map = with_shifts(result.hosts[h].segments, raw, shift);
    m.parent = result.hosts[h].parent;
    m.connected = result.hosts[h].connected;
    m.largest_shift_ns = h < repair.largest_shift_ns.size() ? repair.largest_shift_ns[h] : 0;
    out.hosts.push_back(std::move(m));
  }
  return out;
}

}  // namespace atrace::analysis
