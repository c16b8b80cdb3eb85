#include "sync/piecewise.h"

#include <algorithm>
#include <cmath>

namespace atrace::sync {

namespace {

double slope_of(const Segment& s) { return 1.0 + s.drift_ppm * 1e-6; }

// Nearest integer, without libm's llround (the hot path of every
// corrected time stamp).
int64_t round_ns(double v) { return static_cast<int64_t>(v >= 0 ? v + 0.5 : v - 0.5); }

// The drift term in double: 1e-5 of even a day of ns (8.6e8) keeps far
// under a ns of precision; offset and position stay integers.
int64_t eval(const Segment& s, int64_t local) {
  return local + s.offset_ns +
         round_ns(s.drift_ppm * 1e-6 * static_cast<double>(local - s.start_ns));
}

// The x where an increasing map reaches y.
int64_t solve(const Segments& map, int64_t y) {
  size_t i = 0;
  while (i + 1 < map.size() && eval(map[i + 1], map[i + 1].start_ns) <= y) ++i;
  const Segment& s = map[i];
  long double y0 = static_cast<long double>(eval(s, s.start_ns));
  long double x = s.start_ns + (static_cast<long double>(y) - y0) / slope_of(s);
  return static_cast<int64_t>(std::llround(x));
}

}  // namespace

Segments identity_map() { return {Segment{}}; }

const Segment& segment_at(const Segments& map, int64_t local) {
  auto it = std::upper_bound(map.begin(), map.end(), local,
                             [](int64_t v, const Segment& s) { return v < s.start_ns; });
  return it == map.begin() ? map.front() : *(it - 1);
}

int64_t map_time(const Segments& map, int64_t local) { return eval(segment_at(map, local), local); }

int64_t bound_at(const Segments& map, int64_t local) { return segment_at(map, local).bound_ns; }

double slope_at(const Segments& map, int64_t local) { return slope_of(segment_at(map, local)); }

Segments from_knots(const std::vector<Knot>& knots, const std::vector<int64_t>& bounds) {
  auto bound = [&](size_t i) -> int64_t {
    if (bounds.empty()) return 0;
    return bounds[std::min(i, bounds.size() - 1)];
  };
  if (knots.empty()) return identity_map();
  if (knots.size() == 1) return {Segment{knots[0].x, knots[0].y - knots[0].x, 0, bound(0)}};
  Segments out;
  for (size_t i = 0; i + 1 < knots.size(); ++i) {
    const Knot& k = knots[i];
    const Knot& n = knots[i + 1];
    double slope = static_cast<double>(n.y - k.y) / static_cast<double>(n.x - k.x);
    out.push_back(Segment{k.x, k.y - k.x, (slope - 1.0) * 1e6, bound(i)});
  }
  // The last knot starts nothing new: the last segment continues past it.
  return out;
}

Segments invert(const Segments& map) {
  Segments out;
  for (const Segment& s : map) {
    int64_t y = eval(s, s.start_ns);
    out.push_back(Segment{y, s.start_ns - y, (1.0 / slope_of(s) - 1.0) * 1e6, s.bound_ns});
  }
  return out;
}

Segments compose(const Segments& outer, const Segments& inner) {
  // Breaks: inner's own, and where inner reaches one of outer's.
  std::vector<int64_t> xs;
  for (const Segment& s : inner) xs.push_back(s.start_ns);
  for (size_t i = 1; i < outer.size(); ++i) xs.push_back(solve(inner, outer[i].start_ns));
  std::sort(xs.begin(), xs.end());
  xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
  Segments out;
  for (size_t i = 0; i < xs.size(); ++i) {
    // Slope and bound from inside the piece, away from rounding at its ends.
    int64_t mid = i + 1 < xs.size() ? xs[i] + (xs[i + 1] - xs[i]) / 2 : xs[i] + 1'000'000'000;
    int64_t inner_mid = map_time(inner, mid);
    double slope = slope_at(inner, mid) * slope_at(outer, inner_mid);
    int64_t y = map_time(outer, map_time(inner, xs[i]));
    out.push_back(Segment{xs[i], y - xs[i], (slope - 1.0) * 1e6,
                          add_bounds(bound_at(inner, mid), bound_at(outer, inner_mid))});
  }
  return out;
}

}  // namespace atrace::sync
