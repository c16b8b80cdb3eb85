// The typed tables (output/export_tables.h) of one hand-written trace whose
// every number is known: a call with a nested call, a blocking system call
// inside it, a page fault and a message in its caller, a call left open at
// the end, a DETACH decision, and a thread name that needs escaping. Each table's rows are checked
// field by field; the real server reads real recordings in tests/integration/test_tables.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "output/output.h"
#include "sync/sync.h"
#include "tests/unit/test_formats_util.h"

using namespace atrace;
using formats::EventKind;

namespace {

constexpr uint32_t kTid = 4242;

// What a sink was handed, per table, and in which order.
struct Collect : analysis::TableSink {
  std::map<std::string, std::string> tsv;
  std::vector<std::string> order;
  void rows(const analysis::TableBatch& b) override {
    analysis::append_tsv(b, tsv[b.def().name]);
    order.push_back(b.def().name);
  }
  std::vector<std::vector<std::string>> table(const std::string& name) {
    std::vector<std::vector<std::string>> rows;
    std::istringstream in(tsv[name]);
    std::string line;
    while (std::getline(in, line)) {
      std::vector<std::string> f;
      size_t start = 0;
      for (;;) {
        size_t tab = line.find('\t', start);
        f.push_back(line.substr(start, tab == std::string::npos ? tab : tab - start));
        if (tab == std::string::npos) break;
        start = tab + 1;
      }
      rows.push_back(std::move(f));
    }
    return rows;
  }
};

class ExportTables : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<formats::Event> evs;
    auto add = [&](uint64_t ts, EventKind k, uint32_t id = 0, uint64_t a0 = 0, uint64_t a1 = 0,
                   uint8_t flags = 0) {
      formats::Event e = formats::testing::ev(ts, kTid, k, id);
      e.arg0 = a0;
      e.arg1 = a1;
      e.flags = flags;
      evs.push_back(e);
    };
    add(2000, EventKind::FuncEntry, 1);
    add(2500, EventKind::FuncEntry, 2);
    add(3000, EventKind::SyscallEnter, 0, 0);          // read
    add(3100, EventKind::SchedSwitchOut, 0, 1, 0, 1);  // asleep
    add(3900, EventKind::SchedSwitchIn, 0, 1);
    add(4000, EventKind::SyscallExit, 0, 0, 5);  // read = 5
    add(4500, EventKind::FuncExit, 2);
    add(4600, EventKind::PageFault, 0, 0xdead000, 0x401136, formats::kFaultWrite);
    add(4700, EventKind::Message);
    formats::NetMessage m;
    m.proto = formats::NetProto::Tcp;
    m.bytes = 42;
    m.seq = 1000;
    m.family = 4;
    m.laddr[0] = 127, m.laddr[3] = 1;
    m.paddr[0] = 127, m.paddr[3] = 1;
    m.lport = 5000;
    m.pport = 6000;
    formats::set_net_message(evs.back(), m);
    add(5000, EventKind::FuncExit, 1);
    add(6000, EventKind::FuncEntry, 1);  // never returns
    add(7000, EventKind::Detach, 2, 10, 2000,
        static_cast<uint8_t>(formats::DetachReason::Absolute));
    evs.back().tid = 0;
    formats::TraceHeader h = formats::testing::sample_header();
    h.end_mono_ns = 9000;
    formats::ThreadInfo t;
    t.tid = kTid;
    t.pid = 4242;
    t.name = "a\tb\\c";
    t.events = evs.size();
    formats::TraceWriter w(file_.path());
    w.write_header(h);
    w.write_probes(formats::testing::sample_probes());
    w.write_events(evs);
    w.finish(h, {t}, {});
  }
  formats::testing::TempFile file_;
};

TEST_F(ExportTables, RowsOfEveryTable) {
  formats::TraceReader reader(file_.path());
  Collect sink;
  const uint64_t id = analysis::trace_id(reader, "");
  const analysis::TableCounts counts = analysis::export_tables(reader, id, sink, 2);
  const std::string sid = std::to_string(id);

  // Calls in the order they ended: deflate, compute, then the open compute.
  auto calls = sink.table("calls");
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(counts.of("calls"), 3u);
  for (const auto& c : calls) {
    ASSERT_EQ(c.size(), analysis::table_defs()[3].columns.size());
    EXPECT_EQ(c[0], sid);
  }
  // call_id, parent_id, function_id, depth, start, end, duration, self
  EXPECT_EQ(std::vector<std::string>(calls[0].begin() + 4, calls[0].begin() + 12),
            (std::vector<std::string>{"2", "1", "2", "1", "2500", "4500", "2000", "2000"}));
  EXPECT_EQ(std::vector<std::string>(calls[1].begin() + 4, calls[1].begin() + 12),
            (std::vector<std::string>{"1", "0", "1", "0", "2000", "5000", "3000", "1000"}));
  EXPECT_EQ(std::vector<std::string>(calls[2].begin() + 4, calls[2].begin() + 12),
            (std::vector<std::string>{"3", "0", "1", "0", "6000", "9000", "3000", "3000"}));
  // outermost, timed, finished, ended; kernel time: 800 ns off-CPU, 1000 in read.
  EXPECT_EQ(std::vector<std::string>(calls[0].begin() + 12, calls[0].begin() + 20),
            (std::vector<std::string>{"1", "1", "1", "returned", "800", "1000", "1", "0"}));
  EXPECT_EQ(calls[2][14], "0");
  EXPECT_EQ(calls[2][15], "trace_end");

  // The read and the sleep inside it, both in deflate's call (id 2).
  auto kernel = sink.table("kernel");
  ASSERT_GE(kernel.size(), 2u);
  EXPECT_EQ(kernel[0][4], "offcpu");
  EXPECT_EQ(kernel[0][5], "3100");
  EXPECT_EQ(kernel[0][6], "800");
  EXPECT_EQ(kernel[0][7], "2");
  EXPECT_EQ(kernel[0][13], "blocked");
  EXPECT_EQ(kernel[1][4], "syscall");
  EXPECT_EQ(kernel[1][6], "1000");
  EXPECT_EQ(kernel[1][7], "2");
  EXPECT_EQ(kernel[1][8], "2");
  EXPECT_EQ(kernel[1][10], "read");
  EXPECT_EQ(kernel[1][11], "5");

  // The fault and the message, in compute's call (id 1).
  ASSERT_EQ(kernel.size(), 3u);
  EXPECT_EQ(kernel[2][4], "fault");
  EXPECT_EQ(kernel[2][5], "4600");
  EXPECT_EQ(kernel[2][7], "1");
  EXPECT_EQ(kernel[2][15], std::to_string(0xdead000));
  EXPECT_EQ(kernel[2][16], "1");
  auto messages = sink.table("messages");
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(std::vector<std::string>(messages[0].begin() + 4, messages[0].begin() + 13),
            (std::vector<std::string>{"4700", "1", "1", "send", "tcp", "42", "1000",
                                      "127.0.0.1:5000", "127.0.0.1:6000"}));

  auto threads = sink.table("threads");
  ASSERT_EQ(threads.size(), 1u);
  EXPECT_EQ(threads[0][4], "a\\tb\\\\c");  // escaped as ClickHouse reads it

  auto functions = sink.table("functions");
  ASSERT_EQ(functions.size(), 2u);
  EXPECT_EQ(functions[0][3], "compute(int)");
  EXPECT_EQ(functions[0][4], "compute");

  auto detaches = sink.table("detaches");
  ASSERT_EQ(detaches.size(), 1u);
  EXPECT_EQ(detaches[0][3], "2");
  EXPECT_EQ(detaches[0][5], "10");

  auto traces = sink.table("traces");
  ASSERT_EQ(traces.size(), 1u);
  EXPECT_EQ(traces[0][6], "./demo 3");
  EXPECT_EQ(traces[0][16], "3");  // its calls
  // `traces` is handed over last, after every other table's rows.
  ASSERT_FALSE(sink.order.empty());
  EXPECT_EQ(sink.order.back(), "traces");
  EXPECT_EQ(std::count(sink.order.begin(), sink.order.end(), "traces"), 1);
  // Batches of 2 rows: the 3 calls came in two.
  EXPECT_EQ(std::count(sink.order.begin(), sink.order.end(), "calls"), 2);
}

TEST_F(ExportTables, TraceIdIsStable) {
  formats::TraceReader a(file_.path()), b(file_.path());
  EXPECT_EQ(analysis::trace_id(a, ""), analysis::trace_id(b, ""));
  EXPECT_NE(analysis::trace_id(a, ""), analysis::trace_id(a, "pid=1"));
}

TEST(ExportTablesSchema, ClickHouse1816Types) {
  const std::string sql = analysis::tables_schema_sql("atrace");
  EXPECT_NE(sql.find("CREATE TABLE IF NOT EXISTS atrace.calls\n"), std::string::npos);
  EXPECT_NE(sql.find("ENGINE = MergeTree()\nPARTITION BY trace_id\nORDER BY (trace_id, "
                     "function_id, start_ns);"),
            std::string::npos);
  for (const char* newer : {"DateTime64", "Map(", "CODEC", "LowCardinality"})
    EXPECT_EQ(sql.find(newer), std::string::npos) << newer;
  std::string out;
  analysis::append_tsv_field(out, std::string("x\ty\nz\\\r", 7) + std::string(1, '\0'));
  EXPECT_EQ(out, "x\\ty\\nz\\\\\\r\\0");
}

// message_pairs: a TCP request from compute (thread 4242) received in
// deflate (thread 4243) 300 ns later, its answer back, and a receive whose
// send is not in the trace: two pairs, both ends' threads, calls,
// functions and addresses, the latency report's messages table counts.
TEST(ExportTablesPairs, OneRowPerMatchedPair) {
  constexpr uint32_t kOther = 4243;
  std::vector<formats::Event> evs;
  auto message = [&](uint64_t ts, uint32_t tid, bool recv, uint16_t from, uint16_t to, uint64_t seq,
                     uint32_t bytes) {
    evs.push_back(formats::testing::ev(ts, tid, EventKind::Message, 0));
    formats::NetMessage m;
    m.proto = formats::NetProto::Tcp;
    m.recv = recv;
    m.bytes = bytes;
    m.seq = seq;
    m.family = 4;
    m.laddr[0] = 127, m.laddr[3] = 1;
    m.paddr[0] = 127, m.paddr[3] = 1;
    m.lport = from;  // this end's port
    m.pport = to;
    formats::set_net_message(evs.back(), m);
  };
  evs.push_back(formats::testing::ev(1000, kTid, EventKind::FuncEntry, 1));
  evs.push_back(formats::testing::ev(1100, kOther, EventKind::FuncEntry, 2));
  message(2000, kTid, false, 5000, 6000, 100, 64);     // request
  message(2300, kOther, true, 6000, 5000, 100, 64);    // received
  message(2600, kOther, false, 6000, 5000, 900, 128);  // the answer
  message(3500, kTid, true, 5000, 6000, 900, 128);
  message(3600, kTid, true, 5000, 7000, 1, 10);  // from a peer not traced
  evs.push_back(formats::testing::ev(4000, kOther, EventKind::FuncExit, 2));
  evs.push_back(formats::testing::ev(5000, kTid, EventKind::FuncExit, 1));
  std::sort(evs.begin(), evs.end(),
            [](const formats::Event& a, const formats::Event& b) { return a.ts < b.ts; });
  formats::TraceHeader h = formats::testing::sample_header();
  h.end_mono_ns = 9000;
  formats::ThreadInfo a, b;
  a.tid = kTid, b.tid = kOther;
  a.pid = b.pid = 4242;
  formats::testing::TempFile file;
  {
    formats::TraceWriter w(file.path());
    w.write_header(h);
    w.write_probes(formats::testing::sample_probes());
    w.write_events(evs);
    w.finish(h, {a, b}, {});
  }
  formats::TraceReader reader(file.path());
  Collect sink;
  const uint64_t id = analysis::trace_id(reader, "");
  const analysis::TableCounts counts = analysis::export_tables(reader, id, sink, 1);
  EXPECT_EQ(counts.of("messages"), 5u);
  EXPECT_EQ(counts.of("message_pairs"), 2u);
  auto pairs = sink.table("message_pairs");
  ASSERT_EQ(pairs.size(), 2u);
  const auto& def =
      *std::find_if(analysis::table_defs().begin(), analysis::table_defs().end(),
                    [](const auto& t) { return std::string(t.name) == "message_pairs"; });
  for (const auto& p : pairs) ASSERT_EQ(p.size(), def.columns.size());
  // Each row as "protocol,bytes,latency | the send | the receive", an end
  // as host,pid,tid,ts,call,function,local,peer,raw delta. In the order of
  // the receives. Calls: compute's is 1, deflate's 2.
  auto text = [&](const std::vector<std::string>& f) {
    EXPECT_EQ(f[0], std::to_string(id));
    std::string s;
    for (size_t i = 1; i < f.size(); ++i)
      s += (i == 1 ? "" : i == 4 || i == 13 ? " | " : ",") + f[i];
    return s;
  };
  EXPECT_EQ(text(pairs[0]),
            "tcp,64,300 | 0,4242,4242,2000,1,1,127.0.0.1:5000,127.0.0.1:6000,0 | "
            "0,4242,4243,2300,2,2,127.0.0.1:6000,127.0.0.1:5000,0");
  EXPECT_EQ(text(pairs[1]),
            "tcp,128,900 | 0,4242,4243,2600,2,2,127.0.0.1:6000,127.0.0.1:5000,0 | "
            "0,4242,4242,3500,1,1,127.0.0.1:5000,127.0.0.1:6000,0");
  // The pairs go before `traces`, as every other table.
  ASSERT_FALSE(sink.order.empty());
  EXPECT_EQ(sink.order.back(), "traces");
}

}  // namespace

namespace {

// A merged trace's raw times: the inverse of each host's correction map.
TEST(ExportTablesRawClock, InverseOfTheHostsMap) {
  formats::Corrections c;
  formats::MergedHost reference, shifted;
  reference.map = sync::identity_map();
  shifted.map = sync::from_knots({{0, 1000}});  // raw x is x + 1000 on the merged line
  c.hosts = {reference, shifted};
  const analysis::RawClock raw(&c);
  EXPECT_EQ(raw.raw(0, 5000), 5000u);
  EXPECT_EQ(raw.raw(1, 5000), 4000u);
  EXPECT_EQ(analysis::RawClock(nullptr).raw(1, 5000), 5000u);
}

}  // namespace
