#include "formats/corrections.h"

#include <bit>

namespace atrace::formats {
namespace {

void f64(ByteWriter& out, double v) { out.u64(std::bit_cast<uint64_t>(v)); }
double f64(ByteReader& in) { return std::bit_cast<double>(in.u64()); }

// Bounds are int64 ns, kUnbounded for none: never negative.
uint64_t bound_out(int64_t b) { return b < 0 ? 0 : static_cast<uint64_t>(b); }
int64_t bound_in(uint64_t b) {
  return b >= static_cast<uint64_t>(sync::kUnbounded) ? sync::kUnbounded : static_cast<int64_t>(b);
}

void encode_segment(const sync::Segment& s, ByteWriter& e) {
  e.svarint(s.start_ns);
  e.svarint(s.offset_ns);
  f64(e, s.drift_ppm);
  e.varint(bound_out(s.bound_ns));
}

sync::Segment decode_segment(ByteReader& e) {
  sync::Segment s;
  s.start_ns = e.svarint();
  s.offset_ns = e.svarint();
  s.drift_ppm = f64(e);
  s.bound_ns = bound_in(e.varint());
  return s;
}

}  // namespace

void encode_corrections(const Corrections& c, ByteWriter& out) {
  out.varint(c.reference);
  out.u8(c.estimated ? 1 : 0);
  out.varint(bound_out(c.min_delay_ns));
  out.varint(c.messages);
  out.varint(c.hosts.size());
  for (const auto& h : c.hosts) {
    entry(out, [&](ByteWriter& e) {
      e.str(h.source);
      e.str(h.command);
      e.str(h.kernel);
      e.varint(h.parent);
      e.u8(h.connected ? 1 : 0);
      e.svarint(h.largest_shift_ns);
      e.varint(h.map.size());
      for (const auto& s : h.map) encode_segment(s, e);
    });
  }
  out.varint(c.pairs.size());
  for (const auto& p : c.pairs) {
    entry(out, [&](ByteWriter& e) {
      e.varint(p.a);
      e.varint(p.b);
      e.u8(static_cast<uint8_t>(p.method));
      e.varint(p.messages);
      e.varint(p.windows);
      e.svarint(p.offset_ns);
      f64(e, p.drift_ppm);
      e.varint(bound_out(p.bound_ns));
      e.u8(static_cast<uint8_t>(p.quality));
      e.u8(static_cast<uint8_t>((p.in_tree ? 1 : 0) | (p.loop_consistent ? 2 : 0)));
      e.svarint(p.loop_residual_ns);
      e.varint(p.violations_before);
      e.varint(p.violations_after);
      e.svarint(p.largest_shift_ns);
    });
  }
}

Corrections decode_corrections(ByteReader in) {
  Corrections c;
  c.reference = in.varint32();
  c.estimated = in.u8() != 0;
  c.min_delay_ns = bound_in(in.varint());
  c.messages = in.varint();
  uint64_t n = in.varint();
  if (n > in.left() || n > UINT16_MAX + 1ull) throw Malformed{};
  c.hosts.resize(static_cast<size_t>(n));
  for (auto& h : c.hosts) {
    ByteReader e(in.take(in.varint()));
    h.source = e.str();
    h.command = e.str();
    h.kernel = e.str();
    h.parent = e.varint32();
    h.connected = e.u8() != 0;
    h.largest_shift_ns = e.svarint();
    uint64_t segments = e.varint();
    if (segments == 0 || segments > e.left()) throw Malformed{};
    h.map.resize(static_cast<size_t>(segments));
    for (auto& s : h.map) s = decode_segment(e);
    for (size_t i = 1; i < h.map.size(); i++)
      if (h.map[i].start_ns <= h.map[i - 1].start_ns) throw Malformed{};
    if (h.parent >= n) throw Malformed{};
  }
  if (c.reference >= n) throw Malformed{};
  n = in.varint();
  if (n > in.left()) throw Malformed{};
  c.pairs.resize(static_cast<size_t>(n));
  for (auto& p : c.pairs) {
    ByteReader e(in.take(in.varint()));
    p.a = e.varint32();
    p.b = e.varint32();
    if (p.a >= c.hosts.size() || p.b >= c.hosts.size()) throw Malformed{};
    const uint8_t method = e.u8();
    if (method > static_cast<uint8_t>(sync::Method::kNone)) throw Malformed{};
    p.method = static_cast<sync::Method>(method);
    p.messages = e.varint();
    p.windows = e.varint();
    p.offset_ns = e.svarint();
    p.drift_ppm = f64(e);
    p.bound_ns = bound_in(e.varint());
    const uint8_t quality = e.u8();
    if (quality > static_cast<uint8_t>(sync::Quality::kFail)) throw Malformed{};
    p.quality = static_cast<sync::Quality>(quality);
    const uint8_t flags = e.u8();
    p.in_tree = flags & 1;
    p.loop_consistent = flags & 2;
    p.loop_residual_ns = e.svarint();
    p.violations_before = e.varint();
    p.violations_after = e.varint();
    p.largest_shift_ns = e.svarint();
  }
  return c;
}

}  // namespace atrace::formats
