// Trace file v2 over time: blocks flushed by size and by age (so a killed
// recorder loses at most about a second), and a reader whose memory does not
// grow with the file.
#include <gtest/gtest.h>

#include <random>

#include "tests/unit/test_formats_util.h"

using namespace atrace::fmt;
using namespace atrace::fmt::testing;

TEST(FormatsStreaming, EmptyBatchesFlushBlocksByAge) {
  TempFile f;
  FakeClock clock;
  TraceWriter w(f.path(), clock.options());
  w.write_header(sample_header());
  w.write_probes(sample_probes());
  const uint64_t t0 = 5000000000ull;
  clock.now = t0;
  std::vector<Event> batch = {ev(t0, 1, EventKind::FuncEntry), ev(t0 + 10, 2, EventKind::FuncEntry)};
  w.write_events(batch);
  EXPECT_EQ(w.blocks_written(), 0u);
  clock.now = t0 + 500000000;  // half a second: kept
  w.write_events({});
  EXPECT_EQ(w.blocks_written(), 0u);
  uint64_t before = w.bytes_written();
  clock.now = t0 + 1000000005;  // thread 1's event is a second old, thread 2's not yet
  w.write_events({});
  EXPECT_EQ(w.blocks_written(), 1u);
  EXPECT_GT(w.bytes_written(), before);
  {
    // What a reader sees now, the recorder still running (or killed).
    TraceReader r(f.path());
    EXPECT_EQ(r.event_count(), 1u);
    auto events = all_events(r);
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].tid, 1u);
  }
  clock.now = t0 + 1000000010;
  w.write_events({});
  EXPECT_EQ(w.blocks_written(), 2u);
  w.finish(sample_header(), {}, {});
  TraceReader r(f.path());
  EXPECT_EQ(r.event_count(), 2u);
  EXPECT_TRUE(r.warnings().empty());
}

TEST(FormatsStreaming, FullBlocksAreWrittenAtOnce) {
  TempFile f;
  FakeClock clock;
  TraceWriter w(f.path(), clock.options(/*block_bytes=*/1024));
  w.write_header(sample_header());
  w.write_probes(sample_probes());
  std::vector<Event> batch;
  for (uint64_t i = 0; i < 3000; i++)
    batch.push_back(ev(100 + i * 7, 1, i % 2 ? EventKind::FuncExit : EventKind::FuncEntry));
  w.write_events(batch);
  // About 3 bytes an event: 1 KiB blocks hold about 340 events.
  EXPECT_GE(w.blocks_written(), 7u);
  EXPECT_LE(w.blocks_written(), 10u);
}

// 2 million events of 8 threads: next() never holds more than one decoded
// block per thread, whatever the file's size.
TEST(FormatsStreaming, ReaderHoldsAtMostOneBlockPerThread) {
  TempFile f;
  const uint32_t threads = 8;
  const uint64_t per_thread = 250000;
  {
    FakeClock clock;
    TraceWriter w(f.path(), clock.options());
    w.write_header(sample_header());
    w.write_probes(sample_probes());
    std::mt19937 rng(3);
    std::vector<uint64_t> ts(threads, 1000);
    std::vector<Event> batch;
    for (uint64_t i = 0; i < per_thread; i += 1000) {
      batch.clear();
      for (uint32_t t = 0; t < threads; t++)
        for (uint64_t k = 0; k < 1000; k++) {
          ts[t] += 50 + rng() % 400;
          batch.push_back(ev(ts[t], 100 + t, k % 2 ? EventKind::FuncExit : EventKind::FuncEntry,
                             1 + static_cast<uint32_t>(k % 7)));
        }
      clock.now = ts[0];
      w.write_events(batch);
    }
    w.finish(sample_header(), {}, {});
    EXPECT_EQ(w.events_written(), threads * per_thread);
  }
  TraceReader r(f.path());
  EXPECT_EQ(r.event_count(), threads * per_thread);
  EXPECT_GT(r.block_count(), 10 * uint64_t{threads});  // many blocks per thread
  Event e;
  uint64_t n = 0, last = 0;
  while (r.next(e)) {
    ASSERT_GE(e.ts, last);
    last = e.ts;
    n++;
    ASSERT_LE(r.live_blocks(), threads);
  }
  EXPECT_EQ(n, threads * per_thread);
  EXPECT_LE(r.peak_live_blocks(), threads);
  EXPECT_EQ(r.live_blocks(), 0u);  // every block released at its end
  r.rewind();
  EXPECT_TRUE(r.next(e));
}
