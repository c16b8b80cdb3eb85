// AsyncEventWriter: the trace file's writes on a thread of their own keep
// their order (header and probes first, batches as queued), and a write
// error on the thread reaches the recorder at its next call.
#include <fcntl.h>
#include <gtest/gtest.h>

#include "record/async_writer.h"
#include "tests/unit/test_formats_util.h"

using namespace atrace::formats;
using namespace atrace::formats::testing;
using atrace::AsyncEventWriter;

TEST(AsyncEventWriter, WritesHeaderThenBatchesInOrder) {
  TempFile f;
  FakeClock c;
  TraceWriter w(f.path(), c.options(/*block_bytes=*/512));
  std::vector<Event> written;
  {
    // A bound of 100 events: the 1000 below wait for room, none is lost.
    AsyncEventWriter a(w, 100);
    a.run([&] {
      w.write_header(sample_header());
      w.write_probes(sample_probes());
    });
    for (uint64_t t = 0; t < 1000; t += 10) {
      std::vector<Event> batch;
      for (uint64_t i = t; i < t + 10; i++)
        batch.push_back(ev(100 + i, 1, EventKind::FuncEntry, 1));
      written.insert(written.end(), batch.begin(), batch.end());
      a.write_events(std::move(batch));
      a.write_events({});  // an empty batch: the writer's age flush
    }
    a.flush();
  }
  w.finish(sample_header(), {}, {});
  TraceReader r(f.path());
  auto got = all_events(r);
  ASSERT_EQ(got.size(), written.size());
  for (size_t i = 0; i < got.size(); i++) EXPECT_TRUE(same(got[i], written[i])) << i;
}

TEST(AsyncEventWriter, AWriteErrorOnTheThreadIsThrownToTheCaller) {
  FakeClock c;
  // /dev/full: every write fails with ENOSPC.
  TraceWriter w(open("/dev/full", O_WRONLY | O_CLOEXEC), "/dev/full", c.options(512));
  AsyncEventWriter a(w);
  a.run([&] {
    w.write_header(sample_header());
    w.write_probes(sample_probes());
  });
  EXPECT_THROW(a.flush(), WriteError);
  EXPECT_THROW(a.write_events({ev(1, 1, EventKind::FuncEntry, 1)}), WriteError);
}
