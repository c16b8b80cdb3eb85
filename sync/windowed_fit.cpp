#include "sync/windowed_fit.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>

#include "sync/separating_lines.h"

namespace atrace::sync {

namespace {

using Points = std::vector<PlanePoint>;

// The points with x in [start, end), x-sorted.
Points slice(const Points& pts, int64_t start, int64_t end) {
  auto by_x = [](const PlanePoint& p, int64_t x) { return p.x < x; };
  auto first = std::lower_bound(pts.begin(), pts.end(), start, by_x);
  auto last = std::lower_bound(pts.begin(), pts.end(), end, by_x);
  return Points(first, last);
}

size_t count(const Points& pts, int64_t start, int64_t end) {
  auto by_x = [](const PlanePoint& p, int64_t x) { return p.x < x; };
  return std::lower_bound(pts.begin(), pts.end(), end, by_x) -
         std::lower_bound(pts.begin(), pts.end(), start, by_x);
}

struct Window {
  int64_t start = 0;
  int64_t end = 0;  // exclusive
  SeparatingLines fit;
};

class WindowFitter {
 public:
  WindowFitter(Points above, Points below, const SyncOptions& o)
      : above_(std::move(above)), below_(std::move(below)), o_(o) {}

  Points above_in(int64_t start, int64_t end) const { return slice(above_, start, end); }
  Points below_in(int64_t start, int64_t end) const { return slice(below_, start, end); }

  bool two_way(int64_t start, int64_t end) const {
    return count(above_, start, end) > 0 && count(below_, start, end) > 0;
  }

  // A window no line fits (its clocks changed rate inside it, beyond what
  // the delays hide) is halved while both halves still have messages both
  // ways, so the contradiction stays in as short a piece as possible.
  SeparatingLines lines(int64_t start, int64_t end) const {
    return SeparatingLines(slice(above_, start, end), slice(below_, start, end),
                           o_.max_drift_ppm * 1e-6);
  }

  void fit(int64_t start, int64_t end, std::vector<Window>& out) const {
    SeparatingLines lines = this->lines(start, end);
    if (!lines.feasible() && end - start >= 2 * o_.min_window_ns) {
      int64_t mid = start + (end - start) / 2;
      if (two_way(start, mid) && two_way(mid, end)) {
        fit(start, mid, out);
        fit(mid, end, out);
        return;
      }
    }
    out.push_back(Window{start, end, std::move(lines)});
  }

 private:
  Points above_, below_;
  const SyncOptions& o_;
};

// Window boundaries of about options.window_ns over [lo, hi], each window
// with messages both ways (one without is joined to its neighbour).
std::vector<int64_t> boundaries(const WindowFitter& f, int64_t lo, int64_t hi,
                                const SyncOptions& o) {
  int64_t span = hi - lo;
  int64_t n = std::max<int64_t>(1, std::llround(static_cast<double>(span) / o.window_ns));
  std::vector<int64_t> b;
  for (int64_t j = 0; j <= n; ++j)
    b.push_back(lo + static_cast<int64_t>(static_cast<__int128>(span) * j / n));
  b.back() = hi + 1;
  for (size_t j = 0; j + 1 < b.size();) {
    if (f.two_way(b[j], b[j + 1]) || b.size() == 2) {
      ++j;
    } else if (j + 2 < b.size()) {
      b.erase(b.begin() + static_cast<long>(j) + 1);  // join with the next
    } else {
      b.erase(b.begin() + static_cast<long>(j));  // the last: with the previous
      j = 0;
    }
  }
  return b;
}

int64_t ceil_ns(long double v) { return static_cast<int64_t>(std::ceil(std::max(0.0L, v))); }

// Where the truth's y - x can be at the messages of one window when the
// relation is only known to have a rate (d(y - x)/dx) in [dmin, dmax]:
// each "above" point (x_i, v_i = y_i - x_i) caps it at
//   v_i + dmax (x - x_i) to its right, v_i - dmin (x_i - x) to its left,
// each "below" point floors it likewise, so at x the cap is the least of
// prefix and suffix minima: one sweep each way over the x-sorted points.
class RateBoundedBand {
 public:
  RateBoundedBand(const Points& above, const Points& below, long double dmin, long double dmax)
      : dmin_(dmin), dmax_(dmax) {
    for (const auto& p : above) xs_.push_back(p.x);
    for (const auto& p : below) xs_.push_back(p.x);
    std::sort(xs_.begin(), xs_.end());
    xs_.erase(std::unique(xs_.begin(), xs_.end()), xs_.end());
    const size_t n = xs_.size();
    const long double inf = std::numeric_limits<long double>::max() / 4;
    cap_.assign(n, inf);
    floor_.assign(n, -inf);
    // Left to right: the points at or before each x.
    sweep(above, below, /*forward=*/true);
    sweep(above, below, /*forward=*/false);
  }
  // The message x where `map` is farthest outside the band, and the
  // band's middle there; nothing when it is inside everywhere.
  template <typename Map>
  std::optional<std::pair<int64_t, long double>> farthest_outside(const Map& value_at) const {
    long double most = 0;
    std::optional<std::pair<int64_t, long double>> at;
    for (size_t i = 0; i < xs_.size(); i++) {
      if (cap_[i] < floor_[i]) continue;  // contradictory messages: no band
      const long double v = value_at(xs_[i]);
      const long double out = std::max(v - cap_[i], floor_[i] - v);
      if (out > most) {
        most = out;
        at = std::make_pair(xs_[i], (cap_[i] + floor_[i]) / 2);
      }
    }
    return at;
  }
  // The largest distance from `map` to the band's edges at the messages
  // from x0 to x1.
  template <typename Map>
  long double worst_between(int64_t x0, int64_t x1, const Map& value_at) const {
    long double w = 0;
    for (size_t i = 0; i < xs_.size(); i++) {
      if (xs_[i] < x0 || xs_[i] > x1) continue;
      const long double v = value_at(xs_[i]);
      w = std::max({w, cap_[i] - v, v - floor_[i]});
    }
    return w;
  }

 private:
  void sweep(const Points& above, const Points& below, bool forward) {
    const size_t n = xs_.size();
    // forward: cap from (v_i - dmax x_i) + dmax x; floor from (w_j - dmin x_j) + dmin x.
    // backward: cap from (v_i - dmin x_i) + dmin x; floor from (w_j - dmax x_j) + dmax x.
    const long double dc = forward ? dmax_ : dmin_, df = forward ? dmin_ : dmax_;
    const long double inf = std::numeric_limits<long double>::max() / 4;
    long double best_cap = inf, best_floor = -inf;
    size_t ia = forward ? 0 : above.size(), ib = forward ? 0 : below.size();
    for (size_t k = 0; k < n; k++) {
      const size_t i = forward ? k : n - 1 - k;
      const int64_t x = xs_[i];
      if (forward) {
        for (; ia < above.size() && above[ia].x <= x; ia++)
          best_cap = std::min(best_cap, v(above[ia]) - dc * above[ia].x);
        for (; ib < below.size() && below[ib].x <= x; ib++)
          best_floor = std::max(best_floor, v(below[ib]) - df * below[ib].x);
      } else {
        for (; ia > 0 && above[ia - 1].x >= x; ia--)
          best_cap = std::min(best_cap, v(above[ia - 1]) - dc * above[ia - 1].x);
        for (; ib > 0 && below[ib - 1].x >= x; ib--)
          best_floor = std::max(best_floor, v(below[ib - 1]) - df * below[ib - 1].x);
      }
      const long double lx = static_cast<long double>(x);
      if (best_cap < inf) cap_[i] = std::min(cap_[i], best_cap + dc * lx);
      if (best_floor > -inf) floor_[i] = std::max(floor_[i], best_floor + df * lx);
    }
  }
  static long double v(const PlanePoint& p) { return static_cast<long double>(p.y - p.x); }

  long double dmin_, dmax_;
  std::vector<int64_t> xs_;
  std::vector<long double> cap_, floor_;
};

// The value of y - x at knot j (at x, the start of window j, or the end
// of the last): the middle of what both windows around it allow there,
// which holds the truth when the clocks are straight within each. Not a
// fit of the two windows as one, though its band is narrower there: a
// rate change at the knot, hidden in the delays, would bend that fit's
// knot away from the truth (on simulated runs with a rate change mid-run
// a quarter of the pairs then missed half their minimum delays; without
// a change the joint fit won one seed in 300).
long double knot_value(const std::vector<Window>& windows, size_t j, int64_t x) {
  long double lo = std::numeric_limits<long double>::lowest();
  long double hi = std::numeric_limits<long double>::max();
  long double mids = 0;
  int n = 0;
  for (size_t w : {j - 1, j}) {
    if (w >= windows.size()) continue;  // j - 1 wraps for j = 0
    auto band = windows[w].fit.band(x);
    lo = std::max(lo, band.lo);
    hi = std::min(hi, band.hi);
    mids += (band.lo + band.hi) / 2;
    ++n;
  }
  // Empty: the windows disagree (a change of rate beyond the delays
  // near the knot): between their middles.
  return lo <= hi ? (lo + hi) / 2 : mids / n;
}

}  // namespace

std::optional<PairEstimate> fit_messages(HostIndex a, HostIndex b,
                                         const std::vector<MessageSample>& a_to_b,
                                         const std::vector<MessageSample>& b_to_a,
                                         const SyncOptions& options) {
  if (a_to_b.empty() || b_to_a.empty()) return std::nullopt;
  // x = b's clock, y = a's. b->a arrived after it left: the line passes
  // below (send_b, recv_a); a->b: above (recv_b, send_a).
  Points above, below;
  for (const auto& m : b_to_a) above.push_back(PlanePoint{m.send_ns, m.recv_ns});
  for (const auto& m : a_to_b) below.push_back(PlanePoint{m.recv_ns, m.send_ns});
  auto by_x = [](const PlanePoint& p, const PlanePoint& q) { return p.x < q.x; };
  std::sort(above.begin(), above.end(), by_x);
  std::sort(below.begin(), below.end(), by_x);
  int64_t lo = std::min(above.front().x, below.front().x);
  int64_t hi = std::max(above.back().x, below.back().x);

  WindowFitter fitter(std::move(above), std::move(below), options);
  std::vector<int64_t> b_points = boundaries(fitter, lo, hi, options);
  std::vector<Window> windows;
  for (size_t j = 0; j + 1 < b_points.size(); ++j)
    fitter.fit(b_points[j], b_points[j + 1], windows);

  // Knots at the windows' ends; segment_window[i]: the window of the
  // segment from knot i to knot i + 1.
  std::vector<Knot> knots;
  std::vector<long double> values;
  std::vector<size_t> segment_window;
  for (size_t j = 0; j <= windows.size(); ++j) {
    int64_t x = j < windows.size() ? windows[j].start : hi;
    if (!knots.empty() && x <= knots.back().x) continue;
    long double v = knot_value(windows, j, x);
    knots.push_back(Knot{x, x + static_cast<int64_t>(std::llround(v))});
    values.push_back(v);
    segment_window.push_back(std::min(j, windows.size() - 1));
  }
  auto on_map = [&](size_t i, int64_t x) {  // the map's y - x at x, in segment i
    const int64_t x0 = knots[i].x, x1 = knots[i + 1].x;
    return values[i] + (values[i + 1] - values[i]) * static_cast<long double>(x - x0) /
                           static_cast<long double>(x1 - x0);
  };

  // The relation may bend inside a window (a rate change, its rate within
  // max_rate_change_ppm of what the window's lines allow): the
  // rate-bounded band of its messages holds the truth either way. Where
  // the window's straight piece leaves that band it is wrong whatever the
  // relation is: a knot there, in the band's middle, lets the map follow
  // the bend (straight relations never take one: their lines are inside).
  const long double change = options.max_rate_change_ppm * 1e-6L;
  std::vector<std::optional<RateBoundedBand>> bands(windows.size());
  auto band_of = [&](size_t w) -> const std::optional<RateBoundedBand>& {
    const Window& win = windows[w];
    if (!bands[w] && win.fit.feasible())
      bands[w].emplace(fitter.above_in(win.start, win.end), fitter.below_in(win.start, win.end),
                       win.fit.drift_min() - change, win.fit.drift_max() + change);
    return bands[w];
  };
  for (size_t i = 0; i + 1 < knots.size(); ++i) {
    const auto& band = band_of(segment_window[i]);
    if (!band) continue;
    auto out = band->farthest_outside([&](int64_t x) { return on_map(i, x); });
    if (!out || out->first <= knots[i].x || out->first >= knots[i + 1].x) continue;
    const int64_t x = out->first;
    const long double v = out->second;
    knots.insert(knots.begin() + static_cast<long>(i) + 1,
                 Knot{x, x + static_cast<int64_t>(std::llround(v))});
    values.insert(values.begin() + static_cast<long>(i) + 1, v);
    segment_window.insert(segment_window.begin() + static_cast<long>(i) + 1, segment_window[i]);
    ++i;  // one knot per straight piece: the new pieces are not split again
  }

  // Bound of each segment: the map is straight between its knots and the
  // window's line band is convex above and concave below, so the farthest
  // the truth can be from it, if the relation is straight, is at one of
  // the segment's ends; and, for a bent relation, the rate-bounded band's
  // distance at the segment's messages.
  std::vector<int64_t> bounds;
  bool all_bounded = true, all_feasible = true;
  for (size_t i = 0; i + 1 < knots.size(); ++i) {
    const Window& w = windows[segment_window[i]];
    long double worst = 0;
    for (size_t k : {i, i + 1}) {
      auto band = w.fit.band(knots[k].x);
      worst = std::max({worst, values[k] - band.lo, band.hi - values[k]});
    }
    if (const auto& band = band_of(segment_window[i]))
      worst = std::max(worst, band->worst_between(knots[i].x, knots[i + 1].x,
                                                  [&](int64_t x) { return on_map(i, x); }));
    bounds.push_back(ceil_ns(worst));
    all_bounded = all_bounded && w.fit.drift_bounded();
    all_feasible = all_feasible && w.fit.feasible();
  }

  PairEstimate e;
  e.b_to_a = from_knots(knots, bounds);
  e.report.a = a;
  e.report.b = b;
  e.report.method = Method::kMessages;
  e.report.messages = a_to_b.size() + b_to_a.size();
  e.report.windows = windows.size();
  e.report.quality = !all_feasible ? Quality::kFail
                     : all_bounded ? Quality::kAccurate
                                   : Quality::kApproximate;
  summarise(e, lo, hi);
  return e;
}

}  // namespace atrace::sync
