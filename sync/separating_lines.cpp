#include "sync/separating_lines.h"

#include <algorithm>
#include <limits>

namespace atrace::sync {

namespace {

// Rounding slack when a line touches a point exactly (ns).
constexpr long double kEps = 1e-6L;

template <typename Pt>
long double cross(const Pt& o, const Pt& a, const Pt& b) {
  return (a.u - o.u) * (b.v - o.v) - (a.v - o.v) * (b.u - o.u);
}

// Andrew's monotone chain, one side: lower = true keeps the lower hull.
template <typename Pt>
std::vector<Pt> half_hull(std::vector<Pt> pts, bool lower) {
  std::sort(pts.begin(), pts.end(), [&](const Pt& a, const Pt& b) {
    if (a.u != b.u) return a.u < b.u;
    return lower ? a.v < b.v : a.v > b.v;
  });
  // Of points at one x only the lowest (highest) can be on that hull.
  pts.erase(
      std::unique(pts.begin(), pts.end(), [](const Pt& a, const Pt& b) { return a.u == b.u; }),
      pts.end());
  std::vector<Pt> h;
  for (const Pt& p : pts) {
    while (h.size() >= 2) {
      long double c = cross(h[h.size() - 2], h.back(), p);
      if (lower ? c <= 0 : c >= 0) h.pop_back();
      else break;
    }
    h.push_back(p);
  }
  return h;
}

template <typename Pt>
std::vector<long double> edge_slopes(const std::vector<Pt>& h) {
  std::vector<long double> s;
  for (size_t i = 0; i + 1 < h.size(); ++i)
    s.push_back((h[i + 1].v - h[i].v) / (h[i + 1].u - h[i].u));
  return s;
}

// The root of the line through (b1, h1) and (b2, h2).
long double root(long double b1, long double h1, long double b2, long double h2) {
  if (h2 == h1) return b1;
  return b1 + (0 - h1) * (b2 - b1) / (h2 - h1);
}

}  // namespace

SeparatingLines::SeparatingLines(const std::vector<PlanePoint>& above,
                                 const std::vector<PlanePoint>& below, double max_drift) {
  x0_ = std::numeric_limits<int64_t>::max();
  for (const auto& p : above) x0_ = std::min(x0_, p.x);
  for (const auto& p : below) x0_ = std::min(x0_, p.x);
  c0_ = above.front().y - above.front().x;
  // Centred: u up to a window's length, v up to the delays and the drift
  // over it, so long double keeps well under a ns.
  auto centred = [&](const std::vector<PlanePoint>& in) {
    std::vector<P> out;
    out.reserve(in.size());
    for (const auto& p : in)
      out.push_back(
          P{static_cast<long double>(p.x - x0_), static_cast<long double>((p.y - p.x) - c0_)});
    return out;
  };
  upper_ = half_hull(centred(above), true);
  lower_ = half_hull(centred(below), false);
  f_breaks_ = edge_slopes(upper_);
  g_breaks_ = edge_slopes(lower_);

  const long double M = max_drift;
  std::vector<long double> breaks{-M, M};
  for (long double b : f_breaks_)
    if (b > -M && b < M) breaks.push_back(b);
  for (long double b : g_breaks_)
    if (b > -M && b < M) breaks.push_back(b);
  std::sort(breaks.begin(), breaks.end());
  std::vector<long double> h(breaks.size());
  size_t best = 0;
  for (size_t i = 0; i < breaks.size(); ++i) {
    h[i] = F(breaks[i]) - G(breaks[i]);
    if (h[i] > h[best]) best = i;
  }
  best_m_ = breaks[best];
  if (h[best] < -kEps) {
    overlap_ = -h[best];
    return;
  }
  feasible_ = true;
  // F - G is concave: the possible drifts are one interval around best.
  size_t i0 = best, i1 = best;
  while (i0 > 0 && h[i0 - 1] >= -kEps) --i0;
  while (i1 + 1 < breaks.size() && h[i1 + 1] >= -kEps) ++i1;
  m_lo_ = i0 == 0 ? breaks[0] : root(breaks[i0 - 1], h[i0 - 1], breaks[i0], h[i0]);
  m_hi_ = i1 + 1 == breaks.size() ? breaks[i1] : root(breaks[i1], h[i1], breaks[i1 + 1], h[i1 + 1]);
  drift_bounded_ = i0 > 0 && i1 + 1 < breaks.size();
}

long double SeparatingLines::F(long double m) const {
  long double r = std::numeric_limits<long double>::max();
  for (const P& p : upper_) r = std::min(r, p.v - m * p.u);
  return r;
}

long double SeparatingLines::G(long double m) const {
  long double r = std::numeric_limits<long double>::lowest();
  for (const P& p : lower_) r = std::max(r, p.v - m * p.u);
  return r;
}

SeparatingLines::Band SeparatingLines::band(int64_t x) const {
  const long double u = static_cast<long double>(x - x0_);
  const long double c0 = static_cast<long double>(c0_);
  if (!feasible_) {
    long double mid = (F(best_m_) + G(best_m_)) / 2 + best_m_ * u + c0;
    return Band{mid - overlap_, mid + overlap_};
  }
  // The highest line at u: F(m) + m*u, concave in m, greatest at one of
  // F's breaks or an end of the interval; the lowest likewise with G.
  auto hi_at = [&](long double m) { return F(m) + m * u; };
  auto lo_at = [&](long double m) { return G(m) + m * u; };
  long double hi = std::max(hi_at(m_lo_), hi_at(m_hi_));
  long double lo = std::min(lo_at(m_lo_), lo_at(m_hi_));
  for (long double m : f_breaks_)
    if (m > m_lo_ && m < m_hi_) hi = std::max(hi, hi_at(m));
  for (long double m : g_breaks_)
    if (m > m_lo_ && m < m_hi_) lo = std::min(lo, lo_at(m));
  return Band{lo + c0, hi + c0};
}

}  // namespace atrace::sync
