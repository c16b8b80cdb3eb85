// The read filters (formats/event_filter.h), event by event: which events
// each filter keeps, and the errors for a filter that selects nothing.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "formats/event_filter.h"

namespace atrace::formats {
namespace {

using K = EventKind;

struct Trace {
  TraceHeader header;
  std::vector<ProbeInfo> probes;
  std::vector<ThreadInfo> threads;
  Trace() {
    header.start_mono_ns = 1000;
    header.end_mono_ns = 9000;
    probes.push_back({});
    probes.back().id = 1;
    probes.back().name = "ns::outer(int)";
    probes.push_back({});
    probes.back().id = 2;
    probes.back().name = "inner";
    threads.push_back({10, 10, "main", 0, 0, 0});
    threads.push_back({11, 10, "worker0", 0, 0, 0});
    threads.push_back({21, 20, "worker1", 0, 0, 0});
  }
};

Event ev(uint64_t ts, uint32_t tid, K kind, uint32_t id = 0) {
  Event e;
  e.ts = ts;
  e.tid = tid;
  e.pid = tid == 21 ? 20 : 10;
  e.kind = kind;
  e.id = id;
  return e;
}

// The events `filter` keeps of `events`, as "ts" strings.
std::vector<uint64_t> kept(const EventFilter& filter, const std::vector<Event>& events) {
  Trace t;
  EventSelection s(filter, t.header, t.probes, t.threads);
  std::vector<uint64_t> out;
  for (const auto& e : events)
    if (s.keep(e)) out.push_back(e.ts);
  return out;
}

TEST(FormatsEventFilter, ThreadsByTidPidAndComm) {
  std::vector<Event> events = {ev(1100, 10, K::FuncEntry, 1), ev(1200, 11, K::FuncEntry, 1),
                               ev(1300, 21, K::FuncEntry, 1), ev(1400, 0, K::Detach, 2)};
  EventFilter f;
  f.tids = {11};
  EXPECT_EQ(kept(f, events), (std::vector<uint64_t>{1200, 1400}));  // DETACH: the recording's
  f = {};
  f.pids = {10};
  EXPECT_EQ(kept(f, events), (std::vector<uint64_t>{1100, 1200, 1400}));
  f = {};
  f.comm = "worker*";
  EXPECT_EQ(kept(f, events), (std::vector<uint64_t>{1200, 1300, 1400}));
}

// A named function's calls and everything inside them, on each thread on
// its own; recursion counted; a thread's exit or a gap ends what was open.
TEST(FormatsEventFilter, FunctionKeepsTheSubtree) {
  std::vector<Event> events = {
      ev(1100, 10, K::FuncEntry, 2),  // inner outside outer: no
      ev(1110, 10, K::FuncExit, 2),   //
      ev(1200, 10, K::FuncEntry, 1),  // outer: yes
      ev(1210, 11, K::SyscallEnter),  // another thread: no
      ev(1220, 10, K::FuncEntry, 2),  // inside: yes
      ev(1230, 10, K::PageFault),     // yes
      ev(1240, 10, K::FuncEntry, 1),  // recursion: yes
      ev(1250, 10, K::FuncExit, 1),   // yes
      ev(1260, 10, K::FuncExit, 2),   // still inside the first outer: yes
      ev(1270, 10, K::FuncExit, 1),   // yes, and out
      ev(1280, 10, K::SyscallEnter),  // no
      ev(1300, 11, K::FuncEntry, 1),  // yes
      ev(1310, 11, K::Gap),           // yes, and everything closed
      ev(1320, 11, K::FuncExit, 1),   // an orphan after the gap: no
      ev(1330, 0, K::Detach, 2),      // the recording's: yes
  };
  EventFilter f;
  f.function = "ns::out*";  // the short name
  EXPECT_EQ(kept(f, events),
            (std::vector<uint64_t>{1200, 1220, 1230, 1240, 1250, 1260, 1270, 1300, 1310, 1330}));
  f.function = "ns::outer(int)";  // the full name
  EXPECT_EQ(kept(f, events).size(), 10u);
}

TEST(FormatsEventFilter, TimeRangeFromTheStartBothEndsIncluded) {
  std::vector<Event> events = {ev(1999, 10, K::Comm), ev(2000, 10, K::Comm), ev(3000, 10, K::Comm),
                               ev(3001, 10, K::Comm)};
  Trace t;
  EventFilter f;
  f.from_ns = 1000;
  f.to_ns = 2000;
  EXPECT_EQ(kept(f, events), (std::vector<uint64_t>{2000, 3000}));
  EventSelection s(f, t.header, t.probes, t.threads);
  EXPECT_EQ(s.end_ns(t.header.end_mono_ns), 3000u);  // the range's end
  f.to_ns.reset();
  EXPECT_EQ(kept(f, events), (std::vector<uint64_t>{2000, 3000, 3001}));
  EventSelection open(f, t.header, t.probes, t.threads);
  EXPECT_EQ(open.end_ns(t.header.end_mono_ns), 9000u);
}

TEST(FormatsEventFilter, KindsAndTheirGroups) {
  EXPECT_EQ(event_kinds_named("syscall"), (std::vector<K>{K::SyscallEnter, K::SyscallExit}));
  EXPECT_EQ(event_kinds_named("syscall-exit"), (std::vector<K>{K::SyscallExit}));
  EXPECT_EQ(event_kinds_named("sched").size(), 4u);
  EXPECT_EQ(event_kinds_named("fault"), (std::vector<K>{K::PageFault}));
  EXPECT_TRUE(event_kinds_named("bogus").empty());
  std::vector<Event> events = {ev(1100, 10, K::FuncEntry, 1), ev(1200, 10, K::SyscallEnter),
                               ev(1300, 10, K::SyscallExit), ev(1400, 10, K::PageFault)};
  EventFilter f;
  f.kinds = event_kinds_named("syscall");
  EXPECT_EQ(kept(f, events), (std::vector<uint64_t>{1200, 1300}));
}

TEST(FormatsEventFilter, FiltersThatSelectNothingAreErrors) {
  Trace t;
  auto error = [&](const EventFilter& f) -> std::string {
    try {
      EventSelection s(f, t.header, t.probes, t.threads);
    } catch (const FilterError& e) {
      return e.what();
    }
    return "";
  };
  EventFilter f;
  f.tids = {99};
  EXPECT_EQ(error(f), "--tid=99: no such thread in the trace");
  f = {};
  f.pids = {99, 98};
  EXPECT_EQ(error(f), "--pid=99,98: no such process in the trace");
  f = {};
  f.comm = "nosuch";
  EXPECT_EQ(error(f), "--comm=nosuch: no thread of the trace has a matching name");
  f = {};
  f.function = "nosuch";
  EXPECT_EQ(error(f), "--function=nosuch: no function of the trace matches");
  f = {};
  f.from_ns = 5;
  f.to_ns = 4;
  EXPECT_EQ(error(f), "--time: the range ends before it starts");
  f = {};
  f.tids = {99, 21};  // one of them is there: fine
  EXPECT_EQ(error(f), "");
}

}  // namespace
}  // namespace atrace::formats
