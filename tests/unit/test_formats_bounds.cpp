// Crafted trace files: what a reader allocates is bounded by what it read
// (formats/format_v2.h, kMaxExpansion and kMinFrameSize), never by what a
// length or an index claims; stdin that is not a trace is refused at once.
#include <gtest/gtest.h>
#include <xxhash.h>

#include <cstring>
#include <fstream>

#include "formats/file_source.h"
#include "formats/format_v2.h"
#include "formats/frame.h"
#include "formats/metadata_codec.h"
#include "tests/unit/test_formats_util.h"

using namespace atrace::formats;
using namespace atrace::formats::testing;

namespace {

std::string small_trace(const std::string& path) {
  FakeClock c;
  TraceWriter w(path, c.options(/*block_bytes=*/512));
  w.write_header(sample_header());
  w.write_probes(sample_probes());
  std::vector<Event> batch;
  for (int i = 0; i < 100; i++)
    batch.push_back(ev(1000000 + static_cast<uint64_t>(i) * 1000, 1,
                       i % 2 ? EventKind::FuncExit : EventKind::FuncEntry, 1));
  w.write_events(batch);
  w.finish(sample_header(), {{1, 4242, "main", 0, 0, 0}}, {});
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

uint64_t footer_offset(const std::string& bytes) {
  ByteReader r(std::span<const uint8_t>(
      reinterpret_cast<const uint8_t*>(bytes.data()) + bytes.size() - v2::kTrailerSize, 8));
  return r.u64();
}

// The file with its footer replaced by `f`.
std::string with_footer(const std::string& bytes, const Footer& f) {
  std::string out = bytes.substr(0, footer_offset(bytes));
  ByteWriter payload;
  encode_footer(f, payload);
  std::vector<uint8_t> frame;
  FrameEncoder(3).append(frame, v2::kFrameFooter, {}, payload.buf(), true);
  ByteWriter trailer;
  trailer.u64(out.size());
  trailer.bytes(v2::kTrailerMagic, sizeof v2::kTrailerMagic);
  out.append(frame.begin(), frame.end());
  out.append(trailer.buf().begin(), trailer.buf().end());
  return out;
}

Footer footer_of(const std::string& path, const std::string& bytes) {
  FileSource src(path);
  Frame f;
  EXPECT_EQ(read_frame(src, footer_offset(bytes), f), FrameStatus::Ok);
  std::vector<uint8_t> raw;
  FrameDecoder().payload(f, raw);
  return decode_footer(ByteReader(raw));
}

bool has_warning(const TraceReader& r, const std::string& what) {
  for (const auto& w : r.warnings())
    if (w.find(what) != std::string::npos) return true;
  return false;
}

// The fault campaign's 8.8 KB file listed one 256 MiB strings frame 64
// times and took 3.8 GB: each listing was decoded again.
TEST(FormatsBounds, IndexListingAFrameTwiceIsDamageNotMemory) {
  TempFile t;
  std::string bytes = small_trace(t.path());
  Footer f = footer_of(t.path(), bytes);
  auto listing_strings = [&](int times) {
    Footer g = f;
    g.index.clear();
    for (const auto& x : f.index)
      for (int i = 0; i < (x.type == v2::kFrameStrings ? times : 1); i++) g.index.push_back(x);
    return g;
  };
  // A few times: each listing after the first is ignored.
  t.set_bytes(with_footer(bytes, listing_strings(4)));
  {
    TraceReader r(t.path());
    EXPECT_TRUE(r.damaged());
    EXPECT_TRUE(has_warning(r, "out of order or twice"));
    EXPECT_EQ(r.probes().size(), sample_probes().size());
  }
  // 64 times: more frames than this small file has room for; the footer
  // is refused whole and the file read by scanning.
  t.set_bytes(with_footer(bytes, listing_strings(64)));
  TraceReader r(t.path());
  EXPECT_TRUE(r.damaged());
  EXPECT_TRUE(has_warning(r, "damaged footer"));
  EXPECT_EQ(r.probes().size(), sample_probes().size());
}

// A frame whose head claims far more than its stored bytes can expand to
// is refused before anything is allocated for it.
TEST(FormatsBounds, FrameClaimingMoreThanItsBoundIsRefused) {
  std::vector<uint8_t> frame;
  ByteWriter head;
  head.bytes(v2::kFrameSync, sizeof v2::kFrameSync);
  head.u8(v2::kFrameStrings);
  head.u8(v2::kCodecZstd);
  head.u16(0);
  head.u32(16);          // stored
  head.u32(256u << 20);  // raw: 256 MiB
  frame = head.buf();
  frame.resize(frame.size() + 16, 0x5a);
  uint64_t sum = XXH3_64bits(frame.data(), frame.size());
  for (int i = 0; i < 8; i++) frame.push_back(static_cast<uint8_t>(sum >> (8 * i)));
  TempFile t;
  std::string bytes(v2::kMagic, sizeof v2::kMagic);
  bytes += std::string("\x02\x00\x00\x00", 4);
  bytes.append(frame.begin(), frame.end());
  t.set_bytes(bytes);
  FileSource src(t.path());
  Frame f;
  EXPECT_EQ(read_frame(src, v2::kPreambleSize, f), FrameStatus::BadHead);
}

// The writer keeps the rule: what compresses better is stored as is.
TEST(FormatsBounds, WriterNeverExceedsTheExpansionBound) {
  std::vector<uint8_t> zeros(1 << 20, 0), out;
  FrameEncoder(3).append(out, v2::kFrameStrings, {}, zeros, true);
  ByteReader r(std::span<const uint8_t>(out.data() + 8, 8));
  uint32_t stored = r.u32(), raw = r.u32();
  EXPECT_EQ(raw, zeros.size());
  EXPECT_LE(uint64_t{raw}, uint64_t{stored} * v2::kMaxExpansion);
}

// -i /dev/zero (or an endless pipe of anything else) filled TMPDIR.
TEST(FormatsBounds, InputThatIsNotATraceIsNotSpooled) {
  try {
    FileSource src("/dev/zero");
    FAIL() << "accepted /dev/zero";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("not an atrace trace file"), std::string::npos)
        << e.what();
  }
}

}  // namespace
