// HEADER frame: the calibrated probe costs are appended after kernel_events
// and read only when present (files of earlier writers read as 0).
#include <gtest/gtest.h>

#include "formats/metadata_codec.h"
#include "tests/unit/test_formats_util.h"

using namespace atrace::formats;
using namespace atrace::formats::testing;

TEST(FormatsProbeCost, HeaderRoundTrip) {
  TraceHeader h = sample_header();
  h.probe_cost_nop5_ns = 1234;
  h.probe_cost_emulated_ns = 1789;
  h.probe_cost_singlestep_ns = 15001;
  ByteWriter out;
  encode_header(h, out);
  TraceHeader back = decode_header(ByteReader(std::span<const uint8_t>(out.buf())));
  EXPECT_EQ(back.kernel_events, h.kernel_events);
  EXPECT_EQ(back.probe_cost_nop5_ns, 1234u);
  EXPECT_EQ(back.probe_cost_emulated_ns, 1789u);
  EXPECT_EQ(back.probe_cost_singlestep_ns, 15001u);
}

// The inside costs, appended last, round-trip; a header without them (as
// written before them) reads them as 0 and keeps everything else.
TEST(FormatsProbeCost, InsideCostsRoundTripAndOlderReadZero) {
  TraceHeader h = sample_header();
  h.kernel_limits = {"no uretprobe syscall"};
  h.probe_inside_nop5_ns = 300;
  h.probe_inside_emulated_ns = 700;
  h.probe_inside_singlestep_ns = 9000;
  ByteWriter out;
  encode_header(h, out);
  TraceHeader back = decode_header(ByteReader(std::span<const uint8_t>(out.buf())));
  EXPECT_EQ(back.probe_inside_nop5_ns, 300u);
  EXPECT_EQ(back.probe_inside_emulated_ns, 700u);
  EXPECT_EQ(back.probe_inside_singlestep_ns, 9000u);
  EXPECT_EQ(back.kernel_limits, h.kernel_limits);
  // 300 and 700 take two bytes each as varints, 9000 two.
  TraceHeader older =
      decode_header(ByteReader(std::span<const uint8_t>(out.buf().data(), out.size() - 6)));
  EXPECT_EQ(older.kernel_limits, h.kernel_limits);
  EXPECT_EQ(older.probe_inside_nop5_ns, 0u);
  EXPECT_EQ(older.probe_inside_singlestep_ns, 0u);
}

// A header as written before the costs existed: it ends with kernel_events.
TEST(FormatsProbeCost, OlderHeaderReadsZero) {
  TraceHeader h = sample_header();
  h.probe_cost_nop5_ns = 1;  // written, then cut off below
  ByteWriter out;
  encode_header(h, out);
  // three one-byte varints, the empty kernel_limits and the three one-byte
  // inside costs appended after them
  const size_t without_costs = out.size() - 4 - 3;
  TraceHeader back =
      decode_header(ByteReader(std::span<const uint8_t>(out.buf().data(), without_costs)));
  EXPECT_EQ(back.kernel_events, h.kernel_events);
  EXPECT_EQ(back.probe_cost_nop5_ns, 0u);
  EXPECT_EQ(back.probe_cost_emulated_ns, 0u);
  EXPECT_EQ(back.probe_cost_singlestep_ns, 0u);
}
