// HEADER frame: what the recording kernel lacked (kernel_limits) is
// appended after the probe costs and read only when present (files of
// earlier writers read as none).
#include <gtest/gtest.h>

#include "formats/metadata_codec.h"
#include "tests/unit/test_formats_util.h"

using namespace atrace::formats;
using namespace atrace::formats::testing;

TEST(FormatsKernelLimits, HeaderRoundTrip) {
  TraceHeader h = sample_header();
  h.probe_cost_singlestep_ns = 15001;
  h.kernel_limits = {"no uretprobe syscall: return probes trap", "no uprobe_multi links: ..."};
  ByteWriter out;
  encode_header(h, out);
  TraceHeader back = decode_header(ByteReader(std::span<const uint8_t>(out.buf())));
  EXPECT_EQ(back.probe_cost_singlestep_ns, 15001u);
  EXPECT_EQ(back.kernel_limits, h.kernel_limits);
}

// A header as written before kernel_limits existed: it ends with the costs.
TEST(FormatsKernelLimits, OlderHeaderReadsNone) {
  TraceHeader h = sample_header();
  h.probe_cost_emulated_ns = 7;
  ByteWriter out;
  encode_header(h, out);
  // the count (a one-byte 0) and the three one-byte inside costs after it
  const size_t without_limits = out.size() - 1 - 3;
  TraceHeader back =
      decode_header(ByteReader(std::span<const uint8_t>(out.buf().data(), without_limits)));
  EXPECT_EQ(back.probe_cost_emulated_ns, 7u);
  EXPECT_TRUE(back.kernel_limits.empty());
}
