// The recorder's thread table: names from naming events, whatever order the
// per-CPU rings deliver them in.
#include <gtest/gtest.h>

#include "record/thread_table.h"

namespace atrace {
namespace {

formats::Event at(uint64_t ts, uint32_t tid) {
  formats::Event e;
  e.ts = ts;
  e.pid = 999999;  // no such process: nothing read from /proc
  e.tid = tid;
  e.kind = formats::EventKind::Comm;
  return e;
}

TEST(ThreadTable, LatestNameWinsWhateverTheArrivalOrder) {
  ThreadTable t;
  t.named(at(300, 7), "kt-worker");  // rename, drained first from its CPU's ring
  t.named(at(100, 7), "parent");     // name at creation, drained later
  t.named(at(200, 8), "first");
  t.named(at(400, 8), "second");
  t.named(at(500, 8), "");  // no name: counts as an event, keeps the name
  auto table = t.table();
  ASSERT_EQ(table.size(), 2u);
  EXPECT_EQ(table[0].tid, 7u);
  EXPECT_EQ(table[0].name, "kt-worker");
  EXPECT_EQ(table[0].first_ts, 100u);
  EXPECT_EQ(table[1].name, "second");
  EXPECT_EQ(table[1].events, 3u);
  EXPECT_EQ(table[1].last_ts, 500u);
}

}  // namespace
}  // namespace atrace
