// HEADER frame: the calibrated probe costs are appended after kernel_events
// and read only when present (files of earlier writers read as 0).
#include <gtest/gtest.h>

#include "formats/metadata_codec.h"
#include "tests/unit/test_formats_util.h"

using namespace atrace::fmt;
using namespace atrace::fmt::testing;

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

// A header as written before the costs existed: it ends with kernel_events.
TEST(FormatsProbeCost, OlderHeaderReadsZero) {
  TraceHeader h = sample_header();
  h.probe_cost_nop5_ns = 1;  // written, then cut off below
  ByteWriter out;
  encode_header(h, out);
  // three one-byte varints, and the empty kernel_limits appended after them
  const size_t without_costs = out.size() - 4;
  TraceHeader back =
      decode_header(ByteReader(std::span<const uint8_t>(out.buf().data(), without_costs)));
  EXPECT_EQ(back.kernel_events, h.kernel_events);
  EXPECT_EQ(back.probe_cost_nop5_ns, 0u);
  EXPECT_EQ(back.probe_cost_emulated_ns, 0u);
  EXPECT_EQ(back.probe_cost_singlestep_ns, 0u);
}
