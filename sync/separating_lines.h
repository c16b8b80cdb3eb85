// The convex hull method for one window of one host pair (Duda et al.
// 1987; Jezequel, Trace Compass's SyncAlgorithmFullyIncremental): in the
// plane x = b's clock, y = a's clock, a message b->a is a point the true
// line y = g(x) passes below (it arrived after it left), a message a->b a
// point it passes above. Every line between the two point sets is
// possible; only the lower convex hull of the first set and the upper hull
// of the second limit them. This class answers, from those hulls, which
// drifts are possible and, at any x, the band of possible y.
//
// Worked in the dual: a line v = m*u + k (u = x - x0, v = y - x - c0, so
// m is the drift and k an offset near 0) is possible when
//   G(m) = max over "below" points (v - m*u)  <=  k  <=  F(m) = min over
//   "above" points (v - m*u),
// and |m| <= the assumed drift limit. F is concave, G convex, both
// piecewise linear with breaks at the hulls' edge slopes, so every extreme
// is at one of those breaks: exact in O(h^2) for hulls of h points.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace atrace::sync {

struct PlanePoint {
  int64_t x = 0;
  int64_t y = 0;
};

class SeparatingLines {
 public:
  // above: points every line passes below (or through); below: above (or
  // through). Both non-empty. max_drift: |m| limit (1e-3 = 1000 ppm).
  SeparatingLines(const std::vector<PlanePoint>& above, const std::vector<PlanePoint>& below,
                  double max_drift);

  // Some line passes between the two sets.
  bool feasible() const { return feasible_; }
  // Both extreme drifts are set by points, not by the drift limit: what
  // Trace Compass calls ACCURATE.
  bool drift_bounded() const { return drift_bounded_; }
  double drift_min() const { return static_cast<double>(m_lo_); }
  double drift_max() const { return static_cast<double>(m_hi_); }
  // Not feasible: by how much (ns) the sets overlap at the best drift.
  double overlap_ns() const { return static_cast<double>(overlap_); }
  size_t hull_points() const { return upper_.size() + lower_.size(); }

  // The possible values of y - x at x over every possible line; if not
  // feasible, the best compromise line's value at x, widened by the
  // overlap on both sides.
  struct Band {
    long double lo = 0;
    long double hi = 0;
  };
  Band band(int64_t x) const;

 private:
  struct P {
    long double u, v;
  };
  long double F(long double m) const;
  long double G(long double m) const;

  int64_t x0_ = 0;
  int64_t c0_ = 0;
  std::vector<P> upper_;  // lower hull of the "above" points (F's)
  std::vector<P> lower_;  // upper hull of the "below" points (G's)
  std::vector<long double> f_breaks_, g_breaks_;
  bool feasible_ = false;
  bool drift_bounded_ = false;
  long double m_lo_ = 0, m_hi_ = 0;
  long double overlap_ = 0;
  long double best_m_ = 0;  // where F - G is largest
};

}  // namespace atrace::sync
