// The probe table's entry_delta (FORMAT.md, PROBES): written and read back,
// and read as 0 from entries of the first 2.0 writers, which end before it.
#include <gtest/gtest.h>

#include "formats/metadata_codec.h"
#include "formats/varint.h"

namespace atrace::formats {
namespace {

TEST(FormatsProbePlace, EntryDeltaRoundTrips) {
  ProbeInfo p;
  p.id = 7;
  p.name = "f";
  p.module = "m";
  p.path = "/m";
  p.offset = 0x1004;
  p.entry_delta = 4;
  p.path_kind = ProbePath::Emulated;
  StringInterner strings;
  ByteWriter out;
  encode_probes({p}, strings, out);
  ByteWriter table;
  strings.flush(table);
  std::vector<std::string> names;
  decode_strings(ByteReader({table.data(), table.size()}), names);
  auto back = decode_probes(ByteReader({out.data(), out.size()}), names);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].entry_delta, 4u);
  EXPECT_EQ(back[0].offset, 0x1004u);
  EXPECT_EQ(back[0].name, "f");
}

TEST(FormatsProbePlace, OlderEntriesReadAsAtTheEntry) {
  // One entry as the first 2.0 writers wrote it: no entry_delta at the end.
  ByteWriter entry;
  entry.varint(3);                                        // id
  entry.u8(static_cast<uint8_t>(ProbeKind::Function));    // kind
  entry.u8(static_cast<uint8_t>(ProbePath::SingleStep));  // path_kind
  entry.u64(0x401000);                                    // address
  entry.u64(0x1000);                                      // offset
  for (int s = 0; s < 4; s++) entry.varint(0);            // name, module, path, build_id
  ByteWriter payload;
  payload.varint(1);
  payload.varint(entry.size());
  payload.bytes(entry.data(), entry.size());
  auto back = decode_probes(ByteReader({payload.data(), payload.size()}), {""});
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].id, 3u);
  EXPECT_EQ(back[0].offset, 0x1000u);
  EXPECT_EQ(back[0].entry_delta, 0u);
  EXPECT_EQ(probe_place(back[0].path_kind, back[0].entry_delta), "+0 single-step");
}

}  // namespace
}  // namespace atrace::formats
