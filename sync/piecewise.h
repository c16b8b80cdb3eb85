// Piecewise-linear maps from one clock to another (sync_types.h's
// Segment lists): evaluate, invert, compose. A host's correction is the
// composition of the pair maps along its path in the spanning tree, so
// these are the only operations the rest of sync/ needs.
#pragma once

#include <cstdint>
#include <vector>

#include "sync/sync_types.h"

namespace atrace::sync {

using Segments = std::vector<Segment>;

// A point the map passes through: local x maps to y.
struct Knot {
  int64_t x = 0;
  int64_t y = 0;
};

Segments identity_map();

// The segment that covers local (the first one for times before it).
const Segment& segment_at(const Segments& map, int64_t local);
// Not "apply": a vector argument would bring std::apply in by ADL.
int64_t map_time(const Segments& map, int64_t local);
int64_t bound_at(const Segments& map, int64_t local);
// 1 + drift: how many target ns one local ns is there.
double slope_at(const Segments& map, int64_t local);

// The map through the knots (ascending x), straight between them and
// continued with the last (first) slope past the ends; one knot: offset
// only. bounds[i] is the bound between knot i and i+1 (the last one also
// past the last knot); missing entries take the last given, or 0.
Segments from_knots(const std::vector<Knot>& knots, const std::vector<int64_t>& bounds = {});

// The inverse map (maps are increasing: every slope is positive).
Segments invert(const Segments& map);

// outer(inner(x)): inner maps clock c to b, outer b to a; the result maps
// c to a with the bounds of both added.
Segments compose(const Segments& outer, const Segments& inner);

}  // namespace atrace::sync
