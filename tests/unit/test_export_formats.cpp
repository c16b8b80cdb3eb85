// The four exporters of `atrace convert` on one hand-written trace whose
// every number is known: a call with a nested call, a blocking system call
// inside it, a call left open at the end, a USDT event with arguments, a
// DETACH decision, and a thread name that needs escaping. Each output is
// read back (nlohmann for JSON, the CSV rules, Paje records, protobuf
// framing) and checked field by field. The real consumers (protoc, pj_dump,
// Python's csv) read real recordings in tests/integration/test_convert_*.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <sstream>

#include "output/export.h"
#include "tests/unit/test_formats_util.h"

using namespace atrace;
using formats::EventKind;

namespace {

constexpr uint32_t kPid = 4242, kTid = 4242;
const std::string kWeirdName = "wei\"rd\n\xff";
const std::string kWeirdNameUtf8 = "wei\"rd\n\xef\xbf\xbd";

// Writes the trace once per test; returns its path.
class ExportFormats : public ::testing::Test {
 protected:
  void SetUp() override {
    auto probes = formats::testing::sample_probes();  // 1 compute(int) [demo], 2 deflate [libz]
    formats::ProbeInfo usdt;
    usdt.id = 3;
    usdt.kind = formats::ProbeKind::Usdt;
    usdt.name = "app:request";
    usdt.module = "demo";
    probes.push_back(usdt);

    std::vector<formats::Event> evs;
    auto add = [&](uint64_t ts, EventKind k, uint32_t id = 0, uint64_t a0 = 0, uint64_t a1 = 0,
                   uint8_t flags = 0, uint32_t tid = kTid) {
      formats::Event e = formats::testing::ev(ts, tid, k, id);
      e.arg0 = a0;
      e.arg1 = a1;
      e.flags = flags;
      evs.push_back(e);
      return &evs.back();
    };
    add(2000, EventKind::FuncEntry, 1);
    add(2500, EventKind::FuncEntry, 2);
    add(3000, EventKind::SyscallEnter, 0, 0);          // read
    add(3100, EventKind::SchedSwitchOut, 0, 1, 0, 1);  // asleep (S)
    add(3900, EventKind::SchedSwitchIn, 0, 1);
    add(4000, EventKind::SyscallExit, 0, 0, 5);  // read = 5
    add(4500, EventKind::FuncExit, 2);
    add(5000, EventKind::FuncExit, 1);
    add(6000, EventKind::FuncEntry, 1);  // never returns
    formats::Event* u = add(6500, EventKind::Usdt, 3);
    formats::ProbeArg code, path;
    code.size = 4;
    code.is_signed = true;
    code.value = static_cast<uint64_t>(int64_t{-2});
    path.is_string = true;
    path.str = "/index";
    u->args = {code, path};
    add(7000, EventKind::Detach, 2, 10, 2000, static_cast<uint8_t>(formats::DetachReason::Absolute),
        0);
    evs.back().tid = 0;

    formats::TraceHeader h = formats::testing::sample_header();
    h.end_mono_ns = 9000;
    formats::ThreadInfo t;
    t.tid = kTid;
    t.pid = kPid;
    t.name = kWeirdName;
    t.events = evs.size();
    formats::TraceWriter w(file_.path());
    w.write_header(h);
    w.write_probes(probes);
    w.write_events(evs);
    w.finish(h, {t}, {});
  }

  std::string convert(void (*exporter)(formats::TraceReader&, std::ostream&,
                                       const analysis::ExportOptions&),
                      const analysis::ExportOptions& options = {}) {
    formats::TraceReader reader(file_.path());
    std::ostringstream out;
    exporter(reader, out, options);
    EXPECT_TRUE(out.good());
    return out.str();
  }

  formats::testing::TempFile file_;
};

const nlohmann::json* find(const nlohmann::json& events, const std::string& ph,
                           const std::string& name) {
  for (const auto& e : events)
    if (e.value("ph", "") == ph && e.value("name", "") == name) return &e;
  return nullptr;
}

// Shapes every viewer reads: only X slices, instants and metadata; every
// event named; slices without args, so speedscope (which names a frame by
// its name and args) keeps one frame per function or system call.
TEST_F(ExportFormats, Chrome) {
  std::string text = convert(analysis::export_chrome);
  nlohmann::json doc;
  ASSERT_NO_THROW(doc = nlohmann::json::parse(text)) << text;
  const auto& evs = doc["traceEvents"];
  for (const auto& e : evs) {
    EXPECT_TRUE(e.contains("name") && !e["name"].get<std::string>().empty()) << e.dump();
    const std::string ph = e["ph"];
    EXPECT_TRUE(ph == "X" || ph == "i" || ph == "M") << e.dump();
    if (ph == "X") {
      EXPECT_FALSE(e.contains("args")) << e.dump();
    }
  }

  const auto* deflate = find(evs, "X", "deflate");
  ASSERT_NE(deflate, nullptr) << text;
  EXPECT_EQ((*deflate)["ts"].get<double>(), 2.5);  // microseconds
  EXPECT_EQ((*deflate)["dur"].get<double>(), 2.0);
  EXPECT_EQ((*deflate)["cat"], "function");
  EXPECT_EQ((*deflate)["tid"], kTid);
  EXPECT_EQ((*deflate)["pid"], kPid);

  const auto* read = find(evs, "X", "syscall:read");
  ASSERT_NE(read, nullptr);
  EXPECT_EQ((*read)["ts"].get<double>(), 3.0);
  EXPECT_EQ((*read)["dur"].get<double>(), 1.0);
  const auto* off = find(evs, "X", "off-cpu (blocked)");
  ASSERT_NE(off, nullptr);
  EXPECT_EQ((*off)["dur"].get<double>(), 0.8);

  // compute: one complete call, one left open -> an X from 6 us to the end
  // (9 us), its category saying it is unfinished.
  int complete = 0, open = 0;
  for (const auto& e : evs) {
    if (e["ph"] != "X" || e["name"] != "compute") continue;  // its short name
    if (e["cat"] == "function") ++complete;
    if (e["cat"] == "function,unfinished") {
      ++open;
      EXPECT_EQ(e["ts"].get<double>(), 6.0);
      EXPECT_EQ(e["dur"].get<double>(), 3.0);
    }
  }
  EXPECT_EQ(complete, 1);
  EXPECT_EQ(open, 1);

  const auto* usdt = find(evs, "i", "app:request");
  ASSERT_NE(usdt, nullptr);
  EXPECT_EQ((*usdt)["args"]["arg1"], -2);
  EXPECT_EQ((*usdt)["args"]["arg2"], "/index");
  EXPECT_EQ((*usdt)["cat"], "usdt");
  const auto* detach = find(evs, "i", "detach: deflate");
  ASSERT_NE(detach, nullptr);
  EXPECT_EQ((*detach)["s"], "g");
  EXPECT_EQ((*detach)["args"]["rule"], "absolute");
  EXPECT_EQ((*detach)["args"]["calls"], 10);
  EXPECT_EQ((*detach)["args"]["mean_ns"], 200);

  const auto* thread = find(evs, "M", "thread_name");
  ASSERT_NE(thread, nullptr);
  EXPECT_EQ((*thread)["args"]["name"], kWeirdNameUtf8);
  EXPECT_EQ(doc["otherData"]["command"], "./demo 3");
}

// --slice-args: the details on the slices, for viewers that show them.
TEST_F(ExportFormats, ChromeSliceArgs) {
  analysis::ExportOptions opt;
  opt.slice_args = true;
  std::string text = convert(analysis::export_chrome, opt);
  nlohmann::json doc;
  ASSERT_NO_THROW(doc = nlohmann::json::parse(text)) << text;
  const auto& evs = doc["traceEvents"];
  const auto* deflate = find(evs, "X", "deflate");
  ASSERT_NE(deflate, nullptr) << text;
  EXPECT_EQ((*deflate)["args"]["module"], "libz.so.1");
  const auto* read = find(evs, "X", "syscall:read");
  ASSERT_NE(read, nullptr);
  EXPECT_EQ((*read)["args"]["ret"], 5);
  int unfinished = 0;
  for (const auto& e : evs)
    if (e["ph"] == "X" && e["name"] == "compute" && e.contains("args") &&
        e["args"].value("unfinished", false))
      ++unfinished;
  EXPECT_EQ(unfinished, 1);
}

TEST_F(ExportFormats, Csv) {
  std::string text = convert(analysis::export_csv);
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "ts_ns,pid,tid,cpu,kind,name,module,flags,arg0,arg1,text");
  EXPECT_NE(text.find("\n2500,4242,4242,0,entry,deflate,libz.so.1,0,0,0,\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("\n2000,4242,4242,0,entry,compute(int),demo,0,0,0,\n"), std::string::npos);
  EXPECT_NE(text.find("\n4000,4242,4242,0,syscall-exit,read,,0,0,5,\n"), std::string::npos);
  EXPECT_NE(
      text.find("\n6500,4242,4242,0,usdt,app:request,demo,0,0,0,\"arg1=-2 arg2=\"\"/index\"\"\"\n"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("\n7000,4242,0,0,detach,deflate,libz.so.1,1,10,2000,absolute\n"),
            std::string::npos);
  // A header and one line per event: no field holds a newline here.
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1 + 11);
}

TEST_F(ExportFormats, Paje) {
  std::string text = convert(analysis::export_paje);
  EXPECT_EQ(text.rfind("%EventDef PajeDefineContainerType 0\n", 0), 0u);
  // Times in seconds from the start (1000 ns): the first push at 1 us.
  EXPECT_NE(text.find("\n6 0.000001000 t4242 S f1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\n6 0.000001500 t4242 S f2\n"), std::string::npos);
  EXPECT_NE(text.find("\n7 0.000003500 t4242 S\n"), std::string::npos);
  EXPECT_NE(text.find("\n6 0.000002000 t4242 K s0\n"), std::string::npos);
  EXPECT_NE(text.find("\n3 s0 K \"syscall:read\""), std::string::npos);
  EXPECT_NE(text.find("\n6 0.000002100 t4242 K ob\n"), std::string::npos);
  // The open call is popped at the end (9000 ns), containers destroyed then.
  EXPECT_NE(text.find("\n7 0.000008000 t4242 S\n5 0.000008000 T t4242\n5 0.000008000 P p4242\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("t4242 T p4242 \"tid 4242 wei'rd \xef\xbf\xbd\"\n"), std::string::npos);
  EXPECT_NE(text.find("\n8 0.000006000 p4242 PE \"detach: deflate\"\n"), std::string::npos);
  EXPECT_NE(text.find("\n8 0.000005500 t4242 E \"app:request\"\n"), std::string::npos);
  // Pushes and pops balance per state type.
  auto count = [&](const std::string& s) {
    size_t n = 0;
    for (size_t at = text.find(s); at != std::string::npos; at = text.find(s, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count(" t4242 S f"), 3u);
  EXPECT_EQ(count(" t4242 S\n"), 3u);
}

// Protobuf framing: the file is exactly a sequence of field-1 LEN records.
uint64_t varint(const std::string& s, size_t& at) {
  uint64_t v = 0;
  for (int shift = 0; at < s.size(); shift += 7) {
    auto b = static_cast<uint8_t>(s[at++]);
    v |= uint64_t{b & 0x7fu} << shift;
    if (!(b & 0x80)) return v;
  }
  ADD_FAILURE() << "varint runs past the end";
  return 0;
}

TEST_F(ExportFormats, PerfettoFraming) {
  std::string bytes = convert(analysis::export_perfetto);
  size_t at = 0, packets = 0;
  while (at < bytes.size()) {
    ASSERT_EQ(varint(bytes, at), (1u << 3) | 2u) << "packet " << packets;  // Trace.packet, LEN
    uint64_t len = varint(bytes, at);
    ASSERT_LE(at + len, bytes.size());
    at += len;
    ++packets;
  }
  EXPECT_EQ(at, bytes.size());
  // 1 sequence start + process + thread descriptors, 3 calls x 2, read x 2,
  // off-cpu x 2, usdt + detach instants.
  EXPECT_EQ(packets, 3u + 6u + 2u + 2u + 2u);
  // Names are interned: each appears once, however often it is used
  // (compute is called twice; deflate is named again in the DETACH text).
  for (const char* name : {"compute", "syscall:read", "app:request", "/index"}) {
    size_t n = 0;
    for (size_t p = bytes.find(name); p != std::string::npos; p = bytes.find(name, p + 1)) ++n;
    EXPECT_EQ(n, 1u) << name;
  }
}

}  // namespace
