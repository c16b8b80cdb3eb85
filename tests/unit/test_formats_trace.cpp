// Trace file v1: what the writer writes the reader gives back, and the
// reader's behaviour on files that are cut short, foreign or too new.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "formats/trace_reader.h"
#include "formats/trace_writer.h"

namespace fs = std::filesystem;
using namespace atrace::fmt;

namespace {

// A file name unique to the test, removed afterwards.
class TempFile {
 public:
  TempFile() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = (fs::temp_directory_path() /
             ("atrace-test-" + std::to_string(getpid()) + "-" + info->name() + ".data"))
                .string();
  }
  ~TempFile() { fs::remove(path_); }
  const std::string& path() const { return path_; }

  std::string bytes() const {
    std::ifstream in(path_, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  void set_bytes(const std::string& b) const {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out << b;
  }

 private:
  std::string path_;
};

TraceHeader sample_header() {
  TraceHeader h;
  h.atrace_version = "0.1.0";
  h.command_line = "atrace record -- ./demo 3";
  h.target_command = "./demo 3";
  h.target_pid = 4242;
  h.host = "box";
  h.kernel = "6.18.0";
  h.start_mono_ns = 1000;
  h.start_real_ns = 1700000000000000000ull;
  return h;
}

std::vector<ProbeInfo> sample_probes() {
  ProbeInfo a;
  a.id = 1;
  a.name = "compute(int)";
  a.module = "demo";
  a.path = "/tmp/demo";
  a.address = 0x401136;
  a.offset = 0x1136;
  a.path_kind = ProbePath::Nop5;
  ProbeInfo b = a;
  b.id = 2;
  b.name = "deflate";
  b.module = "libz.so.1";
  b.path = "/usr/lib/x86_64-linux-gnu/libz.so.1";
  b.path_kind = ProbePath::SingleStep;
  return {a, b};
}

Event ev(uint64_t ts, uint32_t tid, EventKind kind, uint32_t id = 1, uint16_t cpu = 0) {
  Event e;
  e.ts = ts;
  e.pid = 4242;
  e.tid = tid;
  e.id = id;
  e.cpu = cpu;
  e.kind = kind;
  return e;
}

// Writes a complete trace: two threads, events batched per thread so that
// file order is not time order.
void write_sample(const std::string& path, bool finish = true) {
  TraceWriter w(path);
  w.write_header(sample_header());
  w.write_probes(sample_probes());
  std::vector<Event> t1 = {ev(2000, 10, EventKind::FuncEntry), ev(5000, 10, EventKind::FuncExit)};
  std::vector<Event> t2 = {ev(3000, 11, EventKind::FuncEntry, 2, 1),
                           ev(4000, 11, EventKind::FuncExit, 2, 1),
                           ev(6000, 11, EventKind::ThreadExit, 0, 1)};
  w.write_events(t1);
  w.write_events(t2);
  EXPECT_EQ(w.events_written(), 5u);
  if (!finish) return;
  TraceHeader end = sample_header();
  end.end_mono_ns = 7000;
  end.end_real_ns = end.start_real_ns + 6000;
  std::vector<ThreadInfo> threads = {{10, 4242, "demo", 2000, 5000, 2},
                                     {11, 4242, "worker", 3000, 6000, 3}};
  LostCounts lost;
  lost.per_cpu = {0, 7};
  w.finish(end, threads, lost);
  EXPECT_GT(w.bytes_written(), 12u);
}

std::vector<Event> all_events(TraceReader& r) {
  std::vector<Event> out;
  Event e;
  while (r.next(e)) out.push_back(e);
  return out;
}

}  // namespace

TEST(FormatsTrace, RoundTrip) {
  TempFile f;
  write_sample(f.path());
  TraceReader r(f.path());
  EXPECT_TRUE(r.warnings().empty());
  EXPECT_EQ(r.version_major(), 1);
  EXPECT_EQ(r.version_minor(), 0);

  const auto& h = r.header();
  EXPECT_EQ(h.atrace_version, "0.1.0");
  EXPECT_EQ(h.command_line, "atrace record -- ./demo 3");
  EXPECT_EQ(h.target_command, "./demo 3");
  EXPECT_EQ(h.target_pid, 4242u);
  EXPECT_EQ(h.host, "box");
  EXPECT_EQ(h.kernel, "6.18.0");
  EXPECT_EQ(h.clock_id, 1u);
  EXPECT_EQ(h.start_mono_ns, 1000u);
  EXPECT_EQ(h.end_mono_ns, 7000u);  // from the final header
  EXPECT_EQ(h.end_real_ns, h.start_real_ns + 6000);

  ASSERT_EQ(r.probes().size(), 2u);
  EXPECT_EQ(r.probes()[0].name, "compute(int)");
  EXPECT_EQ(r.probes()[0].module, "demo");
  EXPECT_EQ(r.probes()[0].address, 0x401136u);
  EXPECT_EQ(r.probes()[0].offset, 0x1136u);
  EXPECT_EQ(r.probes()[0].path_kind, ProbePath::Nop5);
  EXPECT_EQ(r.probes()[1].id, 2u);
  EXPECT_EQ(r.probes()[1].path, "/usr/lib/x86_64-linux-gnu/libz.so.1");
  EXPECT_EQ(r.probes()[1].path_kind, ProbePath::SingleStep);

  ASSERT_EQ(r.threads().size(), 2u);
  EXPECT_EQ(r.threads()[1].tid, 11u);
  EXPECT_EQ(r.threads()[1].name, "worker");
  EXPECT_EQ(r.threads()[1].events, 3u);
  EXPECT_EQ(r.threads()[1].last_ts, 6000u);

  EXPECT_EQ(r.lost().per_cpu, (std::vector<uint64_t>{0, 7}));
  EXPECT_EQ(r.lost().total(), 7u);

  EXPECT_EQ(r.event_count(), 5u);
  auto events = all_events(r);
  ASSERT_EQ(events.size(), 5u);
  std::vector<uint64_t> ts;
  for (const auto& e : events) ts.push_back(e.ts);
  EXPECT_EQ(ts, (std::vector<uint64_t>{2000, 3000, 4000, 5000, 6000}));
  EXPECT_EQ(events[1].tid, 11u);
  EXPECT_EQ(events[1].id, 2u);
  EXPECT_EQ(events[1].cpu, 1u);
  EXPECT_EQ(events[1].kind, EventKind::FuncEntry);
  EXPECT_EQ(events[4].kind, EventKind::ThreadExit);

  r.rewind();
  EXPECT_EQ(all_events(r).size(), 5u);
}

TEST(FormatsTrace, EqualTimestampsKeepFileOrder) {
  TempFile f;
  {
    TraceWriter w(f.path());
    w.write_header(sample_header());
    w.write_probes({});
    std::vector<Event> batch = {ev(100, 1, EventKind::FuncEntry, 5),
                                ev(100, 1, EventKind::FuncExit, 5),
                                ev(50, 2, EventKind::FuncEntry, 6)};
    w.write_events(batch);
    w.finish(sample_header(), {}, {});
  }
  TraceReader r(f.path());
  auto events = all_events(r);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].id, 6u);
  EXPECT_EQ(events[1].kind, EventKind::FuncEntry);
  EXPECT_EQ(events[2].kind, EventKind::FuncExit);
}

TEST(FormatsTrace, LayoutIsLittleEndianWithFixedRecords) {
  TempFile f;
  {
    TraceWriter w(f.path());
    w.write_header(sample_header());
    w.write_probes({});
    std::vector<Event> one = {ev(0x0102030405060708ull, 9, EventKind::FuncExit, 3, 2)};
    w.write_events(one);
    w.finish(sample_header(), {}, {});
  }
  std::string b = f.bytes();
  ASSERT_GT(b.size(), 12u);
  EXPECT_EQ(std::memcmp(b.data(), "ATRACE\0\0", 8), 0);
  EXPECT_EQ(b.substr(8, 4), std::string("\x01\x00\x00\x00", 4));
  // The one EVENTS section: type 3, flags 0, length 24, then the record.
  std::string events_head("\x03\0\0\0\0\0\0\0\x18\0\0\0\0\0\0\0", 16);
  auto at = b.find(events_head);
  ASSERT_NE(at, std::string::npos);
  std::string rec = b.substr(at + 16, 24);
  EXPECT_EQ(rec, std::string("\x08\x07\x06\x05\x04\x03\x02\x01"  // ts
                             "\x92\x10\0\0"                       // pid 4242
                             "\x09\0\0\0"                         // tid
                             "\x03\0\0\0"                         // id
                             "\x02\0"                             // cpu
                             "\x02\0",                            // kind, pad
                             24));
  // Ends with an empty END section.
  EXPECT_EQ(b.substr(b.size() - 16), std::string("\x07\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16));
}

TEST(FormatsTrace, LargeBatchesAreSplitIntoSections) {
  TempFile f;
  const size_t n = 100000;  // 2.4 MB of records
  {
    TraceWriter w(f.path());
    w.write_header(sample_header());
    w.write_probes(sample_probes());
    std::vector<Event> batch;
    for (size_t i = 0; i < n; i++)
      batch.push_back(ev(10 + i, 1, i % 2 ? EventKind::FuncExit : EventKind::FuncEntry));
    for (size_t i = 0; i < n; i += 1000)
      w.write_events(std::span<const Event>(batch).subspan(i, 1000));
    w.finish(sample_header(), {}, {});
  }
  TraceReader r(f.path());
  EXPECT_TRUE(r.warnings().empty());
  EXPECT_EQ(r.event_count(), n);
}

TEST(FormatsTrace, UnknownSectionsAreSkipped) {
  TempFile f;
  write_sample(f.path());
  std::string b = f.bytes();
  // Insert a section of type 99 right after the preamble; a newer minor too.
  std::string extra("\x63\0\0\0\0\0\0\0\x03\0\0\0\0\0\0\0xyz", 19);
  b.insert(12, extra);
  b[10] = 5;  // version 1.5
  f.set_bytes(b);
  TraceReader r(f.path());
  EXPECT_TRUE(r.warnings().empty());
  EXPECT_EQ(r.event_count(), 5u);
  EXPECT_EQ(r.version_minor(), 5);
  EXPECT_EQ(r.header().host, "box");
}

TEST(FormatsTrace, TruncatedFileKeepsCompleteSections) {
  TempFile f;
  write_sample(f.path(), /*finish=*/false);  // destructor flushes, no END
  {
    TraceReader r(f.path());
    ASSERT_EQ(r.warnings().size(), 1u);
    EXPECT_EQ(r.warnings()[0],
              f.path() +
                  ": truncated trace (recorder stopped before finishing): 5 events read, "
                  "thread table and loss counts missing");
    EXPECT_EQ(r.event_count(), 5u);
    EXPECT_EQ(r.header().end_mono_ns, 0u);
    // Thread table rebuilt from the events, without names.
    ASSERT_EQ(r.threads().size(), 2u);
    EXPECT_EQ(r.threads()[0].tid, 10u);
    EXPECT_EQ(r.threads()[0].events, 2u);
    EXPECT_TRUE(r.lost().per_cpu.empty());
  }
  // Cut into the events section: only complete sections remain.
  std::string b = f.bytes();
  f.set_bytes(b.substr(0, b.size() - 10));
  TraceReader r(f.path());
  ASSERT_EQ(r.warnings().size(), 1u);
  EXPECT_NE(r.warnings()[0].find("truncated trace"), std::string::npos);
  EXPECT_EQ(r.probes().size(), 2u);
  EXPECT_EQ(r.event_count(), 0u);  // both batches were in one section
}

TEST(FormatsTrace, CutAnywhereNeverCrashes) {
  TempFile f;
  write_sample(f.path());
  const std::string full = f.bytes();
  for (size_t len = 0; len < full.size(); len++) {
    f.set_bytes(full.substr(0, len));
    try {
      TraceReader r(f.path());
      EXPECT_FALSE(r.warnings().empty()) << "cut at " << len;
    } catch (const TraceError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(f.path() + ": ", 0), 0u) << e.what();
    }
  }
}

TEST(FormatsTrace, GarbageIsNotATrace) {
  TempFile f;
  f.set_bytes("this is certainly not a trace file\n");
  try {
    TraceReader r(f.path());
    FAIL() << "no error";
  } catch (const TraceError& e) {
    EXPECT_EQ(std::string(e.what()), f.path() + ": not an atrace trace file");
  }
  f.set_bytes("");
  EXPECT_THROW(TraceReader{f.path()}, TraceError);
}

TEST(FormatsTrace, NewerMajorVersionIsRefused) {
  TempFile f;
  write_sample(f.path());
  std::string b = f.bytes();
  b[8] = 2;
  b[10] = 3;
  f.set_bytes(b);
  try {
    TraceReader r(f.path());
    FAIL() << "no error";
  } catch (const TraceError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(f.path() +
                                              ": trace format version 2.3 is newer than this "
                                              "atrace (1.0)",
                                          0),
              0u)
        << e.what();
  }
}

TEST(FormatsTrace, MissingFileIsATraceError) {
  try {
    TraceReader r("/nonexistent/atrace.data");
    FAIL() << "no error";
  } catch (const TraceError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("/nonexistent/atrace.data: cannot open", 0), 0u);
  }
}

TEST(FormatsTrace, WriterNamesThePathOnFailure) {
  try {
    TraceWriter w("/nonexistent/dir/out.data");
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("/nonexistent/dir/out.data: ", 0), 0u);
  }
  if (fs::exists("/dev/full")) {
    TraceWriter w("/dev/full");
    EXPECT_THROW(
        {
          w.write_header(sample_header());
          w.write_probes(sample_probes());
        },
        std::runtime_error);
  }
}

TEST(FormatsTrace, EnumNames) {
  EXPECT_STREQ(to_string(EventKind::FuncEntry), "entry");
  EXPECT_STREQ(to_string(EventKind::FuncExit), "exit");
  EXPECT_STREQ(to_string(EventKind::ThreadExit), "thread-exit");
  EXPECT_STREQ(to_string(ProbePath::SingleStep), "single-step");
  EXPECT_STREQ(to_string(ProbePath::Emulated), "emulated");
  EXPECT_STREQ(to_string(ProbePath::Nop5), "nop5");
  EXPECT_STREQ(to_string(ProbePath::Unknown), "unknown");
}
