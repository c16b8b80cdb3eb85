// Function arguments and return values in the file (FORMAT.md, kind 34):
// a FUNC_VALUES record after its FUNC_ENTRY / FUNC_EXIT, read back into
// the event's args; readers skip one that follows nothing.
#include <gtest/gtest.h>

#include "formats/block_codec.h"
#include "formats/format_v2.h"
#include "tests/unit/test_formats_util.h"

using namespace atrace::formats;
using namespace atrace::formats::testing;

namespace {

ProbeArg int_arg(uint8_t slot, uint8_t size, bool is_signed, uint64_t v,
                 ArgFormat f = ArgFormat::Decimal) {
  ProbeArg a;
  a.slot = slot;
  a.size = size;
  a.is_signed = is_signed;
  a.value = v;
  a.format = f;
  return a;
}

ProbeArg str_arg(uint8_t slot, StrState st, uint64_t addr, std::string s) {
  ProbeArg a;
  a.slot = slot;
  a.is_string = true;
  a.size = 0;
  a.str_state = st;
  a.value = addr;
  a.str = std::move(s);
  return a;
}

}  // namespace

TEST(FormatsFuncValues, RoundTripOnEntriesAndExits) {
  TempFile f;
  std::vector<Event> written;
  Event e = ev(100, 1, EventKind::FuncEntry, 1);
  e.args = {int_arg(1, 1, true, static_cast<uint64_t>(int64_t{-5})),
            int_arg(2, 2, false, 65535),
            int_arg(3, 4, true, static_cast<uint64_t>(int64_t{INT32_MIN})),
            int_arg(4, 8, false, 0xdeadbeefcafe, ArgFormat::Hex),
            int_arg(5, 8, false, 0x7ffc0000, ArgFormat::Pointer),
            str_arg(6, StrState::Cut, 0x1000, std::string(127, 'x'))};
  written.push_back(e);
  Event inner = ev(150, 1, EventKind::FuncEntry, 2);
  inner.args = {str_arg(1, StrState::Null, 0, ""), str_arg(2, StrState::Unreadable, 0xdead, ""),
                str_arg(3, StrState::Ok, 0x2000, std::string("\xff\xfe", 2))};
  written.push_back(inner);
  Event inner_exit = ev(170, 1, EventKind::FuncExit, 2);  // FUNC_RETURN with a value
  inner_exit.args = {int_arg(kArgRetval, 8, true, static_cast<uint64_t>(int64_t{-2}))};
  written.push_back(inner_exit);
  written.push_back(ev(200, 1, EventKind::FuncExit, 1));  // no value
  Event orphan = ev(250, 1, EventKind::FuncExit, 2);      // FUNC_EXIT with its id
  orphan.args = {str_arg(kArgRetval, StrState::Ok, 0x3000, "")};
  written.push_back(orphan);
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
  EXPECT_EQ(got[0].args[0].svalue(), -5);
  EXPECT_EQ(got[0].args[2].svalue(), INT32_MIN);
}

// A FUNC_VALUES record that follows no function event (a writer's bug or a
// hand-made file) is skipped without a warning: it is a known kind.
TEST(FormatsFuncValues, OrphanRecordIsSkipped) {
  BlockBuilder b;
  Event e = ev(100, 1, EventKind::SchedSwitchIn, 0);
  b.add(e);
  ByteWriter raw;
  for (uint8_t byte : b.payload()) raw.u8(byte);
  raw.u8(v2::kFuncValues);
  raw.u8(0);  // delta
  raw.u8(1);  // len
  raw.u8(0);  // no values
  BlockMeta m = b.meta();
  m.count = 2;
  BlockCursor cur;
  cur.reset(m, raw.buf());
  UnknownKindCounts unknown{};
  Event got;
  ASSERT_TRUE(cur.next(got, unknown));
  EXPECT_EQ(got.kind, EventKind::SchedSwitchIn);
  EXPECT_FALSE(cur.next(got, unknown));
  EXPECT_EQ(unknown[v2::kFuncValues], 0u);
}
