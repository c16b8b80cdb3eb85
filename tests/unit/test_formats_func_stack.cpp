// Call stacks in the file (FORMAT.md, kind 35): a FUNC_STACK record after
// its FUNC_ENTRY (and after that entry's FUNC_VALUES), read back into the
// event's stack; readers skip one that follows nothing.
#include <gtest/gtest.h>

#include "formats/block_codec.h"
#include "formats/format_v2.h"
#include "tests/unit/test_formats_util.h"

using namespace atrace::formats;
using namespace atrace::formats::testing;

TEST(FormatsFuncStack, RoundTripWithAndWithoutValues) {
  TempFile f;
  std::vector<Event> written;
  Event outer = ev(100, 1, EventKind::FuncEntry, 1);
  // Frames far apart (a library, the program) and going both ways.
  outer.stack = {0x555555555140, 0x7ffff7dd0000, 0x555555555100, 0x10};
  written.push_back(outer);
  Event inner = ev(150, 1, EventKind::FuncEntry, 2);
  ProbeArg a;
  a.slot = 1;
  a.size = 4;
  a.is_signed = true;
  a.value = 3;
  inner.args = {a};
  inner.stack = std::vector<uint64_t>(kMaxStackFrames, 0x401000);
  written.push_back(inner);
  written.push_back(ev(170, 1, EventKind::FuncExit, 2));
  written.push_back(ev(200, 1, EventKind::FuncExit, 1));
  written.push_back(ev(210, 1, EventKind::FuncEntry, 1));  // no stack
  FakeClock c;
  TraceWriter w(f.path(), c.options());
  w.write_header(sample_header());
  w.write_probes(sample_probes());
  w.write_events(written);
  w.finish(sample_header(), {}, {});
  TraceReader r(f.path());
  auto got = all_events(r);
  EXPECT_TRUE(r.warnings().empty());
  ASSERT_EQ(got.size(), written.size());
  for (size_t i = 0; i < got.size(); i++) EXPECT_TRUE(same(got[i], written[i])) << i;
  EXPECT_EQ(got[1].stack.size(), kMaxStackFrames);
  EXPECT_TRUE(got[4].stack.empty());
}

// A FUNC_STACK record that follows no function entry is skipped without a
// warning: it is a known kind.
TEST(FormatsFuncStack, OrphanRecordIsSkipped) {
  BlockBuilder b;
  Event e = ev(100, 1, EventKind::SchedSwitchIn, 0);
  b.add(e);
  ByteWriter raw;
  for (uint8_t byte : b.payload()) raw.u8(byte);
  raw.u8(v2::kFuncStack);
  raw.u8(0);  // delta
  raw.u8(2);  // len
  raw.u8(1);  // one frame
  raw.u8(2);  // zigzag(1)
  BlockMeta m = b.meta();
  m.count = 2;
  BlockCursor cur;
  cur.reset(m, raw.buf());
  UnknownKindCounts unknown{};
  Event got;
  ASSERT_TRUE(cur.next(got, unknown));
  EXPECT_EQ(got.kind, EventKind::SchedSwitchIn);
  EXPECT_FALSE(cur.next(got, unknown));
  EXPECT_EQ(unknown[v2::kFuncStack], 0u);
}

// More frames than the bound is damage, not a long allocation.
TEST(FormatsFuncStack, TooManyFramesIsMalformed) {
  BlockBuilder b;
  b.add(ev(100, 1, EventKind::FuncEntry, 1));
  ByteWriter raw;
  for (uint8_t byte : b.payload()) raw.u8(byte);
  raw.u8(v2::kFuncStack);
  raw.u8(0);
  raw.u8(1);
  raw.u8(static_cast<uint8_t>(kMaxStackFrames + 1));
  BlockMeta m = b.meta();
  m.count = 2;
  BlockCursor cur;
  cur.reset(m, raw.buf());
  UnknownKindCounts unknown{};
  Event got;
  EXPECT_THROW(cur.next(got, unknown), Malformed);
}
