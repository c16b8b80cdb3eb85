// Trace file v2 under damage: files cut anywhere, flipped bytes, kinds and
// frames from a newer minor version.
#include <gtest/gtest.h>

#include <cstring>

#include "formats/block_codec.h"
#include "formats/file_source.h"
#include "formats/format_v2.h"
#include "formats/frame.h"
#include "tests/unit/test_formats_util.h"

using namespace atrace::formats;
using namespace atrace::formats::testing;

namespace {

// Where each frame of a file is (found by walking a good file).
struct FrameSpan {
  uint64_t offset, size;
  uint8_t type;
  uint32_t events;
};

std::vector<FrameSpan> frames_of(const std::string& path) {
  FileSource src(path);
  std::vector<FrameSpan> out;
  uint64_t off = v2::kPreambleSize;
  Frame f;
  while (read_frame(src, off, f) == FrameStatus::Ok) {
    uint32_t n = f.head.type == v2::kFrameEvents ? decode_block_meta(f.ext()).count : 0;
    out.push_back({off, f.head.size(), f.head.type, n});
    off += f.head.size();
  }
  return out;
}

// 4 threads, small blocks: about 40 blocks, the last ones written by finish.
void write_blocks(const std::string& path, bool finish, uint64_t* total = nullptr) {
  FakeClock c;
  TraceWriter w(path, c.options(/*block_bytes=*/512));
  w.write_header(sample_header());
  w.write_probes(sample_probes());
  uint64_t n = 0;
  for (int round = 0; round < 40; round++) {
    std::vector<Event> batch;
    for (uint32_t t = 1; t <= 4; t++)
      for (int i = 0; i < 60; i++) {
        uint64_t ts =
            1000000 + static_cast<uint64_t>(round) * 100000 + static_cast<uint64_t>(i) * 1000 + t;
        batch.push_back(ev(ts, t, i % 2 ? EventKind::FuncExit : EventKind::FuncEntry, 1 + i % 2));
      }
    n += batch.size();
    w.write_events(batch);
  }
  if (total) *total = n;
  if (finish) w.finish(sample_header(), {{1, 4242, "main", 0, 0, 0}}, {});
}

uint64_t events_read(TraceReader& r) {
  uint64_t n = 0;
  Event e;
  while (r.next(e)) n++;
  return n;
}

}  // namespace

// Cut at every byte of the last blocks, footer and trailer: never a crash,
// every complete block read, only the cut block lost, not "damaged".
TEST(FormatsRobustness, CutAtEveryByteOfTheLastBlocksLosesOnlyTheCutBlock) {
  TempFile f;
  uint64_t total = 0;
  write_blocks(f.path(), /*finish=*/true, &total);
  const std::string full = f.bytes();
  auto frames = frames_of(f.path());
  ASSERT_GT(frames.size(), 6u);
  ASSERT_EQ(frames.back().type, v2::kFrameFooter);
  uint64_t from = frames[frames.size() - 4].offset;
  TempFile cut("-cut");
  for (uint64_t len = from; len < full.size(); len++) {
    cut.set_bytes(full.substr(0, len));
    uint64_t expect = 0;
    bool cut_inside_block = false;
    for (const auto& fr : frames) {
      if (fr.offset + fr.size <= len) expect += fr.events;
      else if (fr.offset < len && fr.type == v2::kFrameEvents) cut_inside_block = true;
    }
    TraceReader r(cut.path());
    SCOPED_TRACE("cut at " + std::to_string(len));
    EXPECT_FALSE(r.damaged());
    EXPECT_EQ(r.event_count(), expect);
    EXPECT_EQ(events_read(r), expect);
    if (cut_inside_block) {
      EXPECT_TRUE(has_warning(r, "truncated: the last "));
    }
    EXPECT_TRUE(has_warning(r, "no index (recorder did not finish): rebuilt by scanning") ||
                len >= frames.back().offset + frames.back().size)  // only the trailer cut
        << r.warnings().size();
  }
  (void)total;
}

// The beginning of a file too: an error or a readable (maybe empty) trace.
TEST(FormatsRobustness, CutAnywhereInTheTablesNeverCrashes) {
  TempFile f;
  write_blocks(f.path(), true);
  const std::string full = f.bytes();
  auto frames = frames_of(f.path());
  TempFile cut("-cut");
  for (uint64_t len = 0; len < frames[3].offset + 10; len++) {
    cut.set_bytes(full.substr(0, len));
    try {
      TraceReader r(cut.path());
      events_read(r);
    } catch (const TraceError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(cut.path() + ": ", 0), 0u) << e.what();
    }
  }
}

// One flipped byte in a block: named by number and offset, damaged() set,
// every other block read. With the footer (index) and without (scan).
TEST(FormatsRobustness, FlippedByteIsDetectedAndTheRestRead) {
  for (bool finish : {true, false}) {
    SCOPED_TRACE(finish ? "with index" : "scanned");
    TempFile f;
    uint64_t total = 0;
    write_blocks(f.path(), finish, &total);
    const std::string good = f.bytes();
    auto frames = frames_of(f.path());
    std::vector<FrameSpan> blocks;
    for (const auto& fr : frames)
      if (fr.type == v2::kFrameEvents) blocks.push_back(fr);
    ASSERT_GT(blocks.size(), 10u);
    // Every byte of one block in the middle: its head, payload and checksum.
    size_t victim = blocks.size() / 2;
    const FrameSpan& b = blocks[victim];
    for (uint64_t at = b.offset; at < b.offset + b.size; at++) {
      std::string bad = good;
      bad[at] = static_cast<char>(bad[at] ^ 0x5a);
      f.set_bytes(bad);
      SCOPED_TRACE("flip at " + std::to_string(at));
      TraceReader r(f.path());
      EXPECT_TRUE(r.damaged());
      EXPECT_TRUE(has_warning(r, "damaged block " + std::to_string(victim + 1) +
                                     " at byte offset " + std::to_string(b.offset)))
          << (r.warnings().empty() ? "" : r.warnings().back());
      EXPECT_EQ(events_read(r), total - b.events);
    }
  }
}

TEST(FormatsRobustness, DamagedFooterFallsBackToScanning) {
  TempFile f;
  uint64_t total = 0;
  write_blocks(f.path(), true, &total);
  std::string b = f.bytes();
  auto frames = frames_of(f.path());
  b[frames.back().offset + 20] ^= 1;
  f.set_bytes(b);
  TraceReader r(f.path());
  EXPECT_TRUE(r.damaged());
  EXPECT_TRUE(has_warning(r, "damaged footer at byte offset"));
  EXPECT_EQ(events_read(r), total);
}

// Kinds from a newer minor version are skipped with a warning; kinds 2.0
// defines but the API cannot carry yet are skipped silently.
TEST(FormatsRobustness, UnknownFutureEventKindIsSkippedWithAWarning) {
  TempFile f;
  {
    TraceWriter w(f.path());
    w.write_header(sample_header());
    w.write_probes(sample_probes());
  }  // no footer: the hand-made block below is found by scanning
  ByteWriter p;
  p.u8(v2::kFuncEntry | v2::kFlagCpu);
  p.varint(0);  // delta
  p.varint(3);  // cpu
  p.varint(1);  // probe id
  p.u8(40);     // unknown payload kind
  p.varint(5);
  p.varint(3);
  p.bytes("xyz", 3);
  p.u8(v2::kLost);  // known kind, not in the API yet
  p.varint(0);
  p.varint(4);
  p.bytes("\x01\x02\x03\x04", 4);
  p.u8(v2::kSyscallEnter);  // known, with a field appended by a newer minor
  p.varint(1);
  p.varint(3);  // payload length: nr + 2 bytes the reader skips
  p.varint(39);
  p.u16(0xbeef);
  p.u8(v2::kFuncExit);
  p.varint(10);
  p.varint(1);
  BlockMeta m{7, 4242, 5000, 5016, 5};
  ByteWriter ext;
  encode_block_meta(m, ext);
  ext.u64(0xfeed);  // a newer minor's extra block header field, ignored
  FrameEncoder enc(3);
  std::vector<uint8_t> frame;
  enc.append(frame, v2::kFrameEvents, ext.buf(), p.buf(), true);
  std::string b = f.bytes();
  b.append(frame.begin(), frame.end());
  b[10] = 1;  // version 2.1
  f.set_bytes(b);

  TraceReader r(f.path());
  EXPECT_FALSE(r.damaged());
  auto events = all_events(r);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].kind, EventKind::FuncEntry);
  EXPECT_EQ(events[0].cpu, 3u);
  EXPECT_EQ(events[1].kind, EventKind::SyscallEnter);
  EXPECT_EQ(events[1].ts, 5006u);
  EXPECT_EQ(events[1].arg0, 39u);
  EXPECT_EQ(events[2].kind, EventKind::FuncExit);
  EXPECT_EQ(events[2].ts, 5016u);
  EXPECT_EQ(events[2].cpu, 3u);
  EXPECT_TRUE(has_warning(r, "events of unknown kind 40 skipped (format 2.1 is newer"));
  EXPECT_FALSE(has_warning(r, "kind 28"));
  EXPECT_FALSE(r.damaged());
}

TEST(FormatsRobustness, MalformedEventDataIsDamage) {
  TempFile f;
  {
    TraceWriter w(f.path());
    w.write_header(sample_header());
    w.write_probes({});
  }
  ByteWriter p;
  p.u8(v2::kFuncEntry);
  p.varint(0);
  p.varint(1);
  p.u8(9);  // a compact kind 2.0 does not define: cannot be skipped
  BlockMeta m{7, 1, 100, 100, 2};
  ByteWriter ext;
  encode_block_meta(m, ext);
  FrameEncoder enc(3);
  std::vector<uint8_t> frame;
  enc.append(frame, v2::kFrameEvents, ext.buf(), p.buf(), false);
  std::string b = f.bytes();
  b.append(frame.begin(), frame.end());
  f.set_bytes(b);
  TraceReader r(f.path());
  EXPECT_EQ(all_events(r).size(), 1u);
  EXPECT_TRUE(r.damaged());
  EXPECT_TRUE(has_warning(r, "malformed event data after 1 events"));
}

TEST(FormatsRobustness, ReturnWithoutAnOpenEntryIsDamage) {
  TempFile f;
  {
    TraceWriter w(f.path());
    w.write_header(sample_header());
    w.write_probes({});
  }
  ByteWriter p;
  p.u8(v2::kFuncEntry);
  p.varint(0);
  p.varint(3);
  p.u8(v2::kFuncReturn);  // returns from probe 3
  p.varint(1);
  p.u8(v2::kFuncReturn);  // nothing open: malformed
  p.varint(1);
  BlockMeta m{7, 1, 100, 102, 3};
  ByteWriter ext;
  encode_block_meta(m, ext);
  FrameEncoder enc(3);
  std::vector<uint8_t> frame;
  enc.append(frame, v2::kFrameEvents, ext.buf(), p.buf(), false);
  std::string b = f.bytes();
  b.append(frame.begin(), frame.end());
  f.set_bytes(b);
  TraceReader r(f.path());
  auto events = all_events(r);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].kind, EventKind::FuncExit);
  EXPECT_EQ(events[1].id, 3u);
  EXPECT_TRUE(r.damaged());
  EXPECT_TRUE(has_warning(r, "malformed event data after 2 events"));
}
