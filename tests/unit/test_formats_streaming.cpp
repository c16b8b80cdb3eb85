// Trace file v2 over time: blocks flushed by size and by age (so a killed
// recorder loses at most about a second), and a reader whose memory does not
// grow with the file.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <random>

#include "tests/unit/test_formats_util.h"

using namespace atrace::formats;
using namespace atrace::formats::testing;

TEST(FormatsStreaming, EmptyBatchesFlushBlocksByAge) {
  TempFile f;
  FakeClock clock;
  TraceWriter w(f.path(), clock.options());
  w.write_header(sample_header());
  w.write_probes(sample_probes());
  const uint64_t t0 = 5000000000ull;
  clock.now = t0;
  std::vector<Event> batch = {ev(t0, 1, EventKind::FuncEntry),
                              ev(t0 + 10, 2, EventKind::FuncEntry)};
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

// Not a test: the numbers behind the format's choices. Run with
//   atrace_unit_tests --gtest_also_run_disabled_tests --gtest_filter='*MeasureSize*'
// 10 million calls (20 million events) of 4 threads: a few functions at
// depths 1-4, 20..200 ns between events, batches as the recorder hands them
// (time order, threads interleaved).
TEST(FormatsStreaming, DISABLED_MeasureSize) {
  const uint64_t n = 20000000;
  const uint32_t threads = 4;
  std::vector<Event> events;
  events.reserve(n);
  std::mt19937 rng(11);
  std::vector<std::vector<uint32_t>> stacks(threads);
  uint64_t ts = 1000;
  while (events.size() < n) {
    uint32_t t = rng() % threads;
    ts += 20 + rng() % 180;
    auto& st = stacks[t];
    bool enter = st.empty() || (st.size() < 4 && rng() % 100 < 100 - 20 * st.size());
    Event e = ev(ts, 100 + t, enter ? EventKind::FuncEntry : EventKind::FuncExit, 0,
                 static_cast<uint16_t>(t));
    if (enter) {
      st.push_back(static_cast<uint32_t>(1 + st.size() * 3 + rng() % 3));  // 3 functions per depth
      e.id = st.back();
    } else {
      e.id = st.back();
      st.pop_back();
    }
    events.push_back(e);
  }
  for (int level : {1, 3, 9, 19}) {
    for (size_t block : {size_t{16} << 10, size_t{64} << 10, size_t{256} << 10}) {
      TempFile f("-" + std::to_string(level) + "-" + std::to_string(block));
      FakeClock clock;
      WriterOptions o = clock.options(block);
      o.zstd_level = level;
      timespec a, b;
      clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
      uint64_t bytes = 0;
      {
        TraceWriter w(f.path(), o);
        w.write_header(sample_header());
        w.write_probes(sample_probes());
        for (size_t i = 0; i < events.size(); i += 8192) {
          clock.now = events[i].ts;
          w.write_events(std::span<const Event>(events).subspan(i, std::min<size_t>(8192, n - i)));
        }
        w.finish(sample_header(), {}, {});
        bytes = w.bytes_written();
      }
      clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
      double wsec = static_cast<double>(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
      clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
      TraceReader r(f.path());
      Event e;
      uint64_t got = 0;
      while (r.next(e)) got++;
      clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
      double rsec = static_cast<double>(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
      EXPECT_EQ(got, n);
      std::printf(
          "zstd %2d block %3zu KiB: %.3f bytes/event, writer %.1f M events/s, reader %.1f M "
          "events/s\n",
          level, block >> 10, static_cast<double>(bytes) / static_cast<double>(n),
          static_cast<double>(n) / wsec / 1e6, static_cast<double>(n) / rsec / 1e6);
    }
  }
}

// A writer killed with SIGKILL in the middle of a run (the recorder's fate
// when its user loses patience) leaves a file the reader reads: every block
// written so far, the index rebuilt by scanning.
TEST(FormatsStreaming, WriterKilledWithSigkillLeavesAReadableFile) {
  TempFile f;
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive a failed test
    ::close(ready[0]);
    uint64_t now = 1000000000;
    WriterOptions o;
    o.block_bytes = 4096;
    o.now = [&now] { return now; };
    TraceWriter w(f.path(), o);
    w.write_header(sample_header());
    w.write_probes(sample_probes());
    for (uint64_t i = 0;; i++) {
      std::vector<Event> batch;
      for (uint64_t k = 0; k < 100; k++, now += 100)
        batch.push_back(ev(now, 1 + static_cast<uint32_t>(k % 3),
                           k % 2 ? EventKind::FuncExit : EventKind::FuncEntry));
      w.write_events(batch);
      if (i == 200) (void)!::write(ready[1], "r", 1);  // enough written: kill me
      if (i == 2000) ::pause();                        // bounded, should the kill be late
    }
  }
  ::close(ready[1]);
  char c;
  ssize_t got = ::read(ready[0], &c, 1);
  ::close(ready[0]);
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_EQ(got, 1);
  ASSERT_TRUE(WIFSIGNALED(status));

  TraceReader r(f.path());
  EXPECT_FALSE(r.damaged());
  EXPECT_TRUE(has_warning(r, "no index (recorder did not finish): rebuilt by scanning"));
  EXPECT_GT(r.event_count(), 10000u);  // at least what was flushed before "ready"
  EXPECT_EQ(r.threads().size(), 3u);
  uint64_t n = 0, last = 0;
  Event e;
  while (r.next(e)) {
    EXPECT_GE(e.ts, last);
    last = e.ts;
    n++;
  }
  EXPECT_EQ(n, r.event_count());
}
