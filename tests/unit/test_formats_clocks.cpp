// The host's identity and clock snapshots (CLOCKS frames, formats/FORMAT.md):
// the evidence `atrace merge` corrects time stamps by. Written at the
// start, every second and at the stop; read back in time order; a file
// without them reads as before, and a damaged one costs only the evidence.
#include <gtest/gtest.h>

#include "analysis/analysis.h"
#include "formats/format_v2.h"
#include "formats/metadata_codec.h"
#include "record/clock_evidence.h"
#include "tests/unit/test_formats_util.h"

using namespace atrace::formats;
using namespace atrace::formats::testing;

namespace {

ClockSnapshot snapshot(ClockSnapshot::When when, uint64_t mono, uint64_t real) {
  ClockSnapshot s;
  s.when = when;
  s.mono_before_ns = mono;
  s.mono_after_ns = mono + 140;
  s.real_ns = real;
  s.boot_ns = mono + 5'000'000'000;
  s.maxerror_us = 16'000'000;
  s.esterror_us = 16'000'000;
  s.status = 0x40;  // STA_UNSYNC
  s.freq = -123456;
  s.synchronised = false;
  return s;
}

HostClocks identity() {
  HostClocks c;
  c.boot_id = "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0";
  c.machine_id = "0123456789abcdef0123456789abcdef";
  c.host_name = "node-a";
  return c;
}

bool same(const ClockSnapshot& a, const ClockSnapshot& b) {
  return a.when == b.when && a.mono_before_ns == b.mono_before_ns &&
         a.mono_after_ns == b.mono_after_ns && a.real_ns == b.real_ns && a.boot_ns == b.boot_ns &&
         a.maxerror_us == b.maxerror_us && a.esterror_us == b.esterror_us && a.status == b.status &&
         a.freq == b.freq && a.synchronised == b.synchronised;
}

constexpr uint64_t kReal0 = 1'795'000'000'000'000'000ull;  // 2026

}  // namespace

TEST(FormatsClocks, RoundTripThroughAFileInTimeOrder) {
  TempFile f;
  {
    TraceWriter w(f.path());
    w.write_header(sample_header());
    w.write_probes(sample_probes());
    HostClocks start = identity();
    start.snapshots = {snapshot(ClockSnapshot::When::Start, 1'000'000'000, kReal0)};
    w.write_clocks(start);
    std::vector<Event> events{ev(1'000'000'100, 4242, EventKind::FuncEntry)};
    w.write_events(events);
    HostClocks every = identity();
    every.snapshots = {
        snapshot(ClockSnapshot::When::Periodic, 2'000'000'000, kReal0 + 1'000'000'020)};
    w.write_clocks(every);
    HostClocks none = identity();  // nothing new: no frame
    w.write_clocks(none);
    HostClocks stop = identity();
    stop.snapshots = {snapshot(ClockSnapshot::When::Stop, 3'000'000'000, kReal0 + 2'000'000'040)};
    w.write_clocks(stop);
    w.finish(sample_header(), {}, {});
  }
  TraceReader r(f.path());
  const HostClocks& c = r.clocks();
  EXPECT_EQ(c.boot_id, identity().boot_id);
  EXPECT_EQ(c.machine_id, identity().machine_id);
  EXPECT_EQ(c.host_name, "node-a");
  ASSERT_EQ(c.snapshots.size(), 3u);
  EXPECT_TRUE(same(c.snapshots[0], snapshot(ClockSnapshot::When::Start, 1'000'000'000, kReal0)));
  EXPECT_EQ(c.snapshots[1].when, ClockSnapshot::When::Periodic);
  EXPECT_EQ(c.snapshots[2].when, ClockSnapshot::When::Stop);
  EXPECT_EQ(c.snapshots[2].freq, -123456);
  EXPECT_TRUE(r.warnings().empty());

  // REALTIME gained 40 ns on MONOTONIC in 2 s: +0.02 ppm.
  auto s = atrace::analysis::summarize_clocks(c);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->snapshots, 3u);
  EXPECT_EQ(s->periodic, 1u);
  EXPECT_TRUE(s->has_start && s->has_stop);
  EXPECT_EQ(s->min_width_ns, 140u);
  EXPECT_EQ(*s->real_drift_ns, 40);
  EXPECT_NEAR(*s->real_drift_ppm, 0.02, 1e-9);
  EXPECT_EQ(s->span_ns, 2'000'000'000u);
  EXPECT_FALSE(s->synchronised);
}

TEST(FormatsClocks, FileWithoutClocksHasNone) {
  TempFile f;
  {
    TraceWriter w(f.path());
    w.write_header(sample_header());
    w.finish(sample_header(), {}, {});
  }
  TraceReader r(f.path());
  EXPECT_TRUE(r.clocks().snapshots.empty());
  EXPECT_FALSE(atrace::analysis::summarize_clocks(r.clocks()));
}

TEST(FormatsClocks, MalformedPayloadThrows) {
  HostClocks c = identity();
  c.snapshots = {snapshot(ClockSnapshot::When::Start, 1, 2)};
  ByteWriter out;
  encode_clocks(c, out);
  // Cut inside the snapshot: the entry's length runs past the end.
  std::span<const uint8_t> cut(out.buf().data(), out.buf().size() - 3);
  EXPECT_THROW(decode_clocks(ByteReader(cut)), Malformed);
}

// The recorder's side: this machine's clocks, read as a narrow bracket.
TEST(ClockEvidence, ReadsThisHostsClocks) {
  const auto id = atrace::host_identity();
  EXPECT_EQ(id.boot_id.size(), 36u) << id.boot_id;  // /proc/sys/kernel/random/boot_id
  EXPECT_FALSE(id.host_name.empty());
  const auto s = atrace::read_clocks(ClockSnapshot::When::Start);
  EXPECT_LE(s.mono_before_ns, s.mono_after_ns);
  EXPECT_GT(s.real_ns, kReal0 - 365ull * 86400 * 1'000'000'000);  // a real date
  EXPECT_GE(s.boot_ns, s.mono_before_ns);                         // BOOTTIME >= MONOTONIC
  atrace::ClockEvidence ev(1'000'000);                            // every ms
  ev.start();
  EXPECT_FALSE(ev.due(s.mono_after_ns));  // before the start: nothing due
  const auto first = ev.take();
  ASSERT_EQ(first.snapshots.size(), 1u);
  EXPECT_EQ(first.boot_id, id.boot_id);
  EXPECT_TRUE(ev.due(first.snapshots[0].mono_after_ns + 2'000'000));
  ev.stop();
  const auto rest = ev.take();
  ASSERT_EQ(rest.snapshots.size(), 2u);
  EXPECT_EQ(rest.snapshots[0].when, ClockSnapshot::When::Periodic);
  EXPECT_EQ(rest.snapshots[1].when, ClockSnapshot::When::Stop);
  EXPECT_TRUE(ev.take().snapshots.empty());
}
