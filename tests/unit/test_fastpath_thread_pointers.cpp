// (thread pointer, time) -> tid, and the fork event's thread pointer in the
// trace file.
#include <gtest/gtest.h>

#include "fastpath/thread_pointers.h"
#include "tests/unit/test_formats_util.h"

namespace atrace::fastpath {
namespace {

constexpr uint64_t kA = 0x7f0000001640, kB = 0x7f0000101640, kMain = 0x7f0000200740;

TEST(FastPathThreadPointers, ThreadsAliveAtTheInstallHoldTheirsFromTheStart) {
  ThreadPointerMap m;
  m.add_existing({{100, kMain}, {101, kA}}, 5000);
  EXPECT_EQ(m.tid_at(kMain, 1), 100u);
  EXPECT_EQ(m.tid_at(kA, 9000), 101u);
  EXPECT_EQ(m.tid_at(kB, 9000), kUnknownTid) << "a pointer no thread had is never guessed";
  m.thread_ended(10'000, 101);
  EXPECT_EQ(m.tid_at(kA, 9999), 101u);
  EXPECT_EQ(m.tid_at(kA, 10'000), kUnknownTid);
}

// glibc gives a finished thread's stack and TCB to the next thread.
TEST(FastPathThreadPointers, AReusedPointerNamesEachThreadInItsTime) {
  ThreadPointerMap m;
  m.add_existing({{100, kMain}}, 0);
  m.thread_created(1000, 200, kA);
  m.thread_ended(2000, 200);
  m.thread_created(3000, 201, kA);
  EXPECT_EQ(m.tid_at(kA, 999), kUnknownTid);  // before the first was created
  EXPECT_EQ(m.tid_at(kA, 1000), 200u);
  EXPECT_EQ(m.tid_at(kA, 1999), 200u);
  EXPECT_EQ(m.tid_at(kA, 2500), kUnknownTid);  // nobody's between them
  EXPECT_EQ(m.tid_at(kA, 3000), 201u);
  EXPECT_EQ(m.tid_at(kA, 1'000'000), 201u);
  EXPECT_EQ(m.tid_at(kMain, 2500), 100u);
}

// The new thread's fork can come before the old thread's exit event: the
// kernel clears the old tid (and glibc may reuse the TCB) before the exit
// tracepoint.
TEST(FastPathThreadPointers, ANewHolderEndsTheOldOneWhateverTheExitSays) {
  ThreadPointerMap m;
  m.thread_created(1000, 200, kA);
  m.thread_created(3000, 201, kA);
  m.thread_ended(3010, 200);
  EXPECT_EQ(m.tid_at(kA, 2999), 200u);
  EXPECT_EQ(m.tid_at(kA, 3005), 201u);
  EXPECT_EQ(m.tid_at(kA, 5000), 201u);
  m.thread_ended(6000, 201);
  EXPECT_EQ(m.tid_at(kA, 6000), kUnknownTid);
}

// Times a little outside a life (the TSC conversion's error) belong to the
// one thread near, never to one of two.
TEST(FastPathThreadPointers, SlackGoesToTheOnlyThreadNear) {
  ThreadPointerMap m(/*slack_ns=*/5);
  m.thread_created(1000, 200, kA);
  m.thread_ended(2000, 200);
  m.thread_created(2008, 201, kA);
  EXPECT_EQ(m.tid_at(kA, 997), 200u);
  EXPECT_EQ(m.tid_at(kA, 994), kUnknownTid);
  EXPECT_EQ(m.tid_at(kA, 2001), 200u);
  EXPECT_EQ(m.tid_at(kA, 2004), kUnknownTid) << "within the slack of both";
  EXPECT_EQ(m.tid_at(kA, 2006), 201u);
}

TEST(FastPathThreadPointers, ForkEventsKeepTheirThreadPointerInTheFile) {
  using namespace formats;
  using namespace formats::testing;
  TempFile f;
  std::vector<Event> written;
  Event fork = ev(1000, 10, EventKind::ProcFork);
  fork.arg0 = 4242;
  fork.arg1 = 4250;
  fork.flags = kForkThread;
  set_fork_thread_pointer(fork, kA);
  written.push_back(fork);
  Event old = fork;  // as the writers before the field: none
  old.ts = 2000;
  old.arg1 = 4251;
  set_fork_thread_pointer(old, 0);
  written.push_back(old);
  {
    FakeClock c;
    TraceWriter w(f.path(), c.options());
    w.write_header(sample_header());
    w.write_probes(sample_probes());
    w.write_events(written);
    w.finish(sample_header(), {}, {});
  }
  TraceReader r(f.path());
  auto got = all_events(r);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(fork_thread_pointer(got[0]), kA);
  EXPECT_EQ(got[0].arg1, 4250u);
  EXPECT_EQ(got[0].flags, kForkThread);
  EXPECT_EQ(fork_thread_pointer(got[1]), 0u);
  EXPECT_TRUE(got[1].args.empty());
  EXPECT_EQ(fork_thread_pointer(ev(3000, 10, EventKind::Comm)), 0u);
}

}  // namespace
}  // namespace atrace::fastpath
