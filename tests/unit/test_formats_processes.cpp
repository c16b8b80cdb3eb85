// The process table (PROCESSES frames, formats/FORMAT.md): what the user
// knows each traced process by. A frame type added after the first 2.0
// writers: files without it read as before, a damaged one costs only the
// names, and readers that predate it skip it like any unknown frame.
#include <gtest/gtest.h>
#include <xxhash.h>

#include "formats/event_filter.h"
#include "formats/format_v2.h"
#include "formats/metadata_codec.h"
#include "tests/unit/test_formats_util.h"

using namespace atrace::formats;
using namespace atrace::formats::testing;

namespace {

ProcessInfo container_process() {
  ProcessInfo p;
  p.pid = 4242;
  p.ns_pid = 1;
  p.pid_ns = 4026532801;
  p.mnt_ns = 4026532800;
  p.cgroup =
      "/machine.slice/"
      "libpod-3f2a9c1b0d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8.scope";
  p.name = "3f2a9c1b0d4e";
  p.root = "/var/lib/containers/storage/overlay/abc/merged";
  return p;
}

ProcessInfo host_process() {
  ProcessInfo p;
  p.pid = 5000;
  p.ns_pid = 5000;
  p.pid_ns = 4026531836;
  p.mnt_ns = 4026531841;
  p.cgroup = "/system.slice/nginx.service";
  p.name = "nginx.service";
  return p;
}

bool same(const ProcessInfo& a, const ProcessInfo& b) {
  return a.pid == b.pid && a.ns_pid == b.ns_pid && a.pid_ns == b.pid_ns && a.mnt_ns == b.mnt_ns &&
         a.cgroup == b.cgroup && a.name == b.name && a.root == b.root;
}

// A file with a thread of each process; `processes` written after the
// probes and (`late`) a second table in the middle of the events.
void write_file(const std::string& path, const std::vector<ProcessInfo>& processes,
                const std::vector<ProcessInfo>& late = {}, bool finish = true) {
  TraceWriter w(path);
  w.write_header(sample_header());
  w.write_probes(sample_probes());
  w.write_processes(processes);
  Event a = ev(1000, 4242, EventKind::FuncEntry);
  Event b = ev(1100, 5000, EventKind::FuncEntry);
  b.pid = 5000;
  std::vector<Event> first{a, b};
  w.write_events(first);
  w.write_processes(late);
  a.ts = 1200;
  a.kind = EventKind::FuncExit;
  std::vector<Event> second{a};
  w.write_events(second);
  if (!finish) return;
  ThreadInfo ta, tb;
  ta.tid = ta.pid = 4242;
  tb.tid = tb.pid = 5000;
  w.finish(sample_header(), {ta, tb}, {});
}

}  // namespace

TEST(FormatsProcesses, RoundTripThroughAFile) {
  TempFile f;
  write_file(f.path(), {container_process()}, {host_process()});
  TraceReader r(f.path());
  ASSERT_EQ(r.processes().size(), 2u);
  EXPECT_TRUE(same(r.processes()[0], container_process()));  // by host pid
  EXPECT_TRUE(same(r.processes()[1], host_process()));
  ASSERT_NE(r.process(4242), nullptr);
  EXPECT_EQ(r.process(4242)->ns_pid, 1u);
  EXPECT_EQ(r.process(77), nullptr);
  EXPECT_EQ(all_events(r).size(), 3u);
  EXPECT_FALSE(r.damaged());
  EXPECT_TRUE(r.warnings().empty());
}

// Killed before the footer: the frames are found by scanning, the table too.
TEST(FormatsProcesses, ReadFromAnUnfinishedFile) {
  TempFile f;
  {
    TraceWriter w(f.path());
    w.write_header(sample_header());
    w.write_probes(sample_probes());
    w.write_processes({container_process()});
    std::vector<Event> evs{ev(1000, 4242, EventKind::FuncEntry)};
    w.write_events(evs);
  }  // no finish()
  TraceReader r(f.path());
  ASSERT_EQ(r.processes().size(), 1u);
  EXPECT_TRUE(same(r.processes()[0], container_process()));
}

// Files of writers before the table: none, and everything else as before.
TEST(FormatsProcesses, OlderFilesHaveNone) {
  TempFile f;
  write_file(f.path(), {});
  TraceReader r(f.path());
  EXPECT_TRUE(r.processes().empty());
  EXPECT_EQ(r.process(4242), nullptr);
  EXPECT_EQ(all_events(r).size(), 3u);
  EXPECT_TRUE(r.warnings().empty());
}

// A later writer's longer entries: the fields known are read, the rest skipped.
TEST(FormatsProcesses, AppendedFieldsAreSkipped) {
  ByteWriter out;
  out.varint(1);
  ByteWriter e;
  e.varint(4242);
  e.varint(1);
  e.varint(11);
  e.varint(12);
  e.str("/a.scope");
  e.str("");
  e.str("/r");
  e.str("a later field");
  e.varint(99);
  out.varint(e.size());
  out.bytes(e.buf().data(), e.size());
  auto back = decode_processes(ByteReader(std::span<const uint8_t>(out.buf())));
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].pid, 4242u);
  EXPECT_EQ(back[0].ns_pid, 1u);
  EXPECT_EQ(back[0].pid_ns, 11u);
  EXPECT_EQ(back[0].mnt_ns, 12u);
  EXPECT_EQ(back[0].cgroup, "/a.scope");
  EXPECT_EQ(back[0].root, "/r");
}

TEST(FormatsProcesses, TruncatedEntryIsMalformed) {
  ByteWriter out;
  encode_processes({container_process()}, out);
  std::vector<uint8_t> cut(out.buf().begin(), out.buf().end() - 3);
  EXPECT_THROW(decode_processes(ByteReader(std::span<const uint8_t>(cut))), Malformed);
}

// What a reader before the table does with it: a frame type it does not
// know is skipped by its size (FORMAT.md, rule 5). Here a type no reader
// knows stands in for it, written where the table goes, in a file the
// reader scans (no footer index to list the frame's old type).
TEST(FormatsProcesses, UnknownFrameTypesAreSkipped) {
  TempFile f;
  write_file(f.path(), {container_process()}, {}, false);
  std::string bytes = f.bytes();
  const std::string sync("ATFR\x06", 5);
  const size_t at = bytes.find(sync);
  ASSERT_NE(at, std::string::npos);
  // Retype it (7) and fix its checksum: a good frame of an unknown type.
  bytes[at + 4] = 7;
  ByteReader head(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()) + at + 6, 10));
  const size_t ext = head.u16(), stored = head.u32();
  const size_t body = 16 + ext + stored;
  ByteWriter sum;
  sum.u64(XXH3_64bits(bytes.data() + at, body));
  bytes.replace(at + body, 8, reinterpret_cast<const char*>(sum.buf().data()), 8);
  f.set_bytes(bytes);
  TraceReader r(f.path());
  EXPECT_TRUE(r.processes().empty());
  EXPECT_EQ(all_events(r).size(), 3u);
  EXPECT_FALSE(r.damaged());
}

// A damaged table costs the names only: the events are all read.
TEST(FormatsProcesses, DamagedTableIsSkipped) {
  TempFile f;
  write_file(f.path(), {container_process()});
  std::string bytes = f.bytes();
  const size_t at = bytes.find(std::string("ATFR\x06", 5));
  ASSERT_NE(at, std::string::npos);
  bytes[at + 20] ^= 0x55;  // in its payload: the checksum no longer matches
  f.set_bytes(bytes);
  TraceReader r(f.path());
  EXPECT_TRUE(r.processes().empty());
  EXPECT_EQ(all_events(r).size(), 3u);
  EXPECT_TRUE(r.damaged());
}

// --pid takes a container's own pid as well as the host's.
TEST(FormatsProcesses, PidFilterTakesTheNamespacePid) {
  TempFile f;
  write_file(f.path(), {container_process(), host_process()});
  {
    TraceReader r(f.path());
    EventFilter filter;
    filter.pids = {1};  // the container's init: host pid 4242
    r.select(filter);
    auto evs = all_events(r);
    ASSERT_EQ(evs.size(), 2u);
    for (const auto& e : evs) EXPECT_EQ(e.pid, 4242u);
  }
  {
    TraceReader r(f.path());
    EventFilter filter;
    filter.pids = {5000};  // a host pid, the same in its namespace
    r.select(filter);
    auto evs = all_events(r);
    ASSERT_EQ(evs.size(), 1u);
    EXPECT_EQ(evs[0].pid, 5000u);
  }
  {
    TraceReader r(f.path());
    EventFilter filter;
    filter.pids = {2};  // no process has it, in any namespace
    EXPECT_THROW(r.select(filter), FilterError);
  }
}
