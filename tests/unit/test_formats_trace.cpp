// Trace file v2: what the writer writes the reader gives back, and the
// reader's behaviour on files that are foreign or too new.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "formats/block_codec.h"
#include "formats/format_v2.h"
#include "formats/frame.h"
#include "tests/unit/test_formats_util.h"

using namespace atrace::formats;
using namespace atrace::formats::testing;

namespace {

// Writes a complete trace: two threads, batched per thread so that file
// order is not time order.
void write_sample(const std::string& path, bool finish = true) {
  FakeClock clock;
  TraceWriter w(path, clock.options());
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

}  // namespace

TEST(FormatsTrace, RoundTrip) {
  TempFile f;
  write_sample(f.path());
  TraceReader r(f.path());
  EXPECT_TRUE(r.warnings().empty());
  EXPECT_FALSE(r.damaged());
  EXPECT_EQ(r.version_major(), 2);
  EXPECT_EQ(r.version_minor(), 0);

  const auto& h = r.header();
  EXPECT_EQ(h.atrace_version, "0.1.0");
  EXPECT_EQ(h.command_line, "atrace record -- ./demo 3");
  EXPECT_EQ(h.target_command, "./demo 3");
  EXPECT_EQ(h.target_pid, 4242u);
  EXPECT_EQ(h.host, "box");
  EXPECT_EQ(h.kernel, "6.18.0");
  EXPECT_EQ(h.kernel_events, "sched,syscalls");
  EXPECT_EQ(h.clock_id, 1u);
  EXPECT_EQ(h.start_mono_ns, 1000u);
  EXPECT_EQ(h.start_real_ns, 1700000000000000000ull);
  EXPECT_EQ(h.end_mono_ns, 7000u);  // from the footer
  EXPECT_EQ(h.end_real_ns, h.start_real_ns + 6000);

  ASSERT_EQ(r.probes().size(), 2u);
  EXPECT_EQ(r.probes()[0].name, "compute(int)");
  EXPECT_EQ(r.probes()[0].module, "demo");
  EXPECT_EQ(r.probes()[0].address, 0x401136u);
  EXPECT_EQ(r.probes()[0].offset, 0x1136u);
  EXPECT_EQ(r.probes()[0].path_kind, ProbePath::Nop5);
  EXPECT_EQ(r.probes()[0].build_id, "0123456789abcdef0123456789abcdef01234567");
  EXPECT_EQ(r.probes()[1].id, 2u);
  EXPECT_EQ(r.probes()[1].path, "/usr/lib/x86_64-linux-gnu/libz.so.1");
  EXPECT_EQ(r.probes()[1].path_kind, ProbePath::SingleStep);
  EXPECT_EQ(r.probes()[0].entry_delta, 0u);
  EXPECT_EQ(r.probes()[1].entry_delta, 4u);
  EXPECT_EQ(r.probes()[1].offset, 0x1140u);
  EXPECT_EQ(r.probes()[1].build_id, "");

  ASSERT_EQ(r.threads().size(), 2u);
  EXPECT_EQ(r.threads()[1].tid, 11u);
  EXPECT_EQ(r.threads()[1].name, "worker");
  EXPECT_EQ(r.threads()[1].events, 3u);
  EXPECT_EQ(r.threads()[1].last_ts, 6000u);

  EXPECT_EQ(r.lost().per_cpu, (std::vector<uint64_t>{0, 7}));
  EXPECT_EQ(r.lost().total(), 7u);

  EXPECT_EQ(r.event_count(), 5u);
  EXPECT_EQ(r.block_count(), 2u);  // one per thread
  auto events = all_events(r);
  ASSERT_EQ(events.size(), 5u);
  std::vector<uint64_t> ts;
  for (const auto& e : events) ts.push_back(e.ts);
  EXPECT_EQ(ts, (std::vector<uint64_t>{2000, 3000, 4000, 5000, 6000}));
  EXPECT_EQ(events[1].tid, 11u);
  EXPECT_EQ(events[1].pid, 4242u);
  EXPECT_EQ(events[1].id, 2u);
  EXPECT_EQ(events[1].cpu, 1u);
  EXPECT_EQ(events[1].kind, EventKind::FuncEntry);
  EXPECT_EQ(events[4].kind, EventKind::ThreadExit);

  r.rewind();
  EXPECT_EQ(all_events(r).size(), 5u);
}

// Every kind the API has, with random ids, CPUs, pids and time gaps (from 0
// to more than 32 bits), over several threads and many blocks.
TEST(FormatsTrace, RandomRoundTripOfEveryKind) {
  TempFile f;
  std::mt19937_64 rng(7);
  const EventKind kinds[] = {
      EventKind::FuncEntry,      EventKind::FuncExit,      EventKind::ThreadExit,
      EventKind::SchedSwitchOut, EventKind::SchedSwitchIn, EventKind::SchedWakeup,
      EventKind::SchedMigrate,   EventKind::SyscallEnter,  EventKind::SyscallExit,
      EventKind::PageFault,      EventKind::ProcFork,      EventKind::ProcExec,
      EventKind::ProcExit,       EventKind::Comm,          EventKind::Detach,
      EventKind::Usdt,           EventKind::Unwind,        EventKind::ModuleLoad,
      EventKind::ModuleUnload,   EventKind::Gap,           EventKind::Message};
  const size_t nkinds = std::size(kinds);
  std::vector<Event> written;
  std::vector<uint64_t> clock(6, 1);
  for (int i = 0; i < 50000; i++) {
    uint32_t t = static_cast<uint32_t>(rng() % 6);
    uint64_t gap = rng() % 4 == 0 ? rng() % (1ull << 40) : rng() % 300;
    clock[t] += gap;
    Event e;
    e.ts = clock[t];
    e.tid = t == 5 ? UINT32_MAX : 1000 + t;  // extremes too
    e.pid = t < 3 ? 77 : UINT32_MAX - t;
    e.kind = kinds[rng() % (rng() % 2 ? 3 : nkinds)];
    bool func = e.kind == EventKind::FuncEntry || e.kind == EventKind::FuncExit;
    e.id = func ? static_cast<uint32_t>(rng()) : 0;
    // The fields each kind carries (trace_types.h), at random sizes.
    auto any = [&] { return rng() >> (rng() % 64); };
    switch (e.kind) {
      case EventKind::SchedSwitchOut:
        e.flags = static_cast<uint8_t>(rng());
        e.arg0 = any();
        break;
      case EventKind::SchedSwitchIn:
      case EventKind::SyscallEnter: e.arg0 = any(); break;
      case EventKind::SchedWakeup:
      case EventKind::SchedMigrate:
      case EventKind::SyscallExit:
        e.arg0 = any();
        e.arg1 = any() - (rng() % 2 ? 4096 : 0);
        break;
      case EventKind::PageFault:
      case EventKind::ProcFork:
        e.arg0 = any();
        e.arg1 = any();
        e.flags = static_cast<uint8_t>(rng());
        break;
      case EventKind::ProcExit:
        e.arg0 = static_cast<uint64_t>(-static_cast<int64_t>(rng() % 300));
        break;
      case EventKind::ProcExec: e.text = "/usr/bin/" + std::string(rng() % 300, 'x'); break;
      case EventKind::Comm: e.text = std::string(rng() % 16, 'c'); break;
      case EventKind::Detach:  // reasons beyond the known ones too
        e.id = static_cast<uint32_t>(rng());
        e.flags = static_cast<uint8_t>(rng());
        e.arg0 = any();
        e.arg1 = any();
        break;
      case EventKind::Unwind:  // how values beyond the known ones too
        e.id = static_cast<uint32_t>(rng());
        e.flags = static_cast<uint8_t>(rng());
        // The entry time of the call it names (0: none), at most its own.
        if (rng() % 2) e.arg0 = e.ts - rng() % (e.ts + 1);
        break;
      case EventKind::ModuleLoad:  // path, base, build id (empty too)
      case EventKind::ModuleUnload:
        e.text = "/usr/lib/libm" + std::to_string(rng() % 100) + ".so";
        e.arg0 = any();
        set_module_build_id(e, std::string(rng() % 2 ? 40 : 0, 'f'));
        break;
      case EventKind::Gap: e.arg0 = any(); break;
      case EventKind::Message: {  // every protocol, both families, offsets unknown too
        NetMessage m;
        m.recv = rng() % 2;
        m.proto = static_cast<NetProto>(1 + rng() % 5);
        m.offset_known = m.inet() || rng() % 8 != 0;
        m.bytes = any();
        m.seq = m.proto == NetProto::Tcp ? static_cast<uint32_t>(rng()) : any();
        if (m.inet()) {
          m.family = rng() % 2 ? 4 : 6;
          for (size_t b = 0; b < (m.family == 4 ? 4u : 16u); b++) {
            m.laddr[b] = static_cast<uint8_t>(rng());
            m.paddr[b] = static_cast<uint8_t>(rng());
          }
          m.lport = static_cast<uint16_t>(rng());
          m.pport = static_cast<uint16_t>(rng());
        } else {
          m.obj = any();
          m.peer_obj = any();
        }
        set_net_message(e, m);
        break;
      }
      case EventKind::Usdt:  // 0-6 arguments of every size, sign and strings
        e.id = static_cast<uint32_t>(rng());
        e.args.resize(rng() % 7);
        for (auto& a : e.args) {
          a.is_string = rng() % 4 == 0;
          a.is_signed = !a.is_string && rng() % 2;
          if (a.is_string) {
            a.size = 0;
            a.str = std::string(rng() % (kUsdtStringMax + 1), static_cast<char>('a' + rng() % 26));
            continue;
          }
          a.size = static_cast<uint8_t>(1u << (rng() % 4));
          uint64_t v = any();
          if (a.size < 8) v &= (uint64_t{1} << (8 * a.size)) - 1;
          if (a.is_signed && a.size < 8 && (v >> (8 * a.size - 1)) & 1)
            v |= ~uint64_t{0} << (8 * a.size);
          a.value = v;
        }
        break;
      default: break;
    }
    e.cpu = static_cast<uint16_t>(rng() % 8 == 0 ? rng() : e.tid % 4);
    written.push_back(e);
  }
  {
    FakeClock c;
    TraceWriter w(f.path(), c.options(/*block_bytes=*/4096));
    w.write_header(sample_header());
    w.write_probes(sample_probes());
    for (size_t i = 0; i < written.size(); i += 777)
      w.write_events(
          std::span<const Event>(written).subspan(i, std::min<size_t>(777, written.size() - i)));
    EXPECT_GT(w.blocks_written(), 20u);
    w.finish(sample_header(), {}, {});
  }
  TraceReader r(f.path());
  EXPECT_TRUE(r.warnings().empty());
  EXPECT_EQ(r.event_count(), written.size());
  auto got = all_events(r);
  ASSERT_EQ(got.size(), written.size());
  // Global time order; within a thread, the order written.
  std::vector<Event> expect = written;
  std::stable_sort(expect.begin(), expect.end(), [](const Event& a, const Event& b) {
    return a.ts != b.ts ? a.ts < b.ts : a.tid < b.tid;
  });
  for (size_t i = 0; i < got.size(); i++) {
    ASSERT_TRUE(same(got[i], expect[i]))
        << "event " << i << " ts " << got[i].ts << " vs " << expect[i].ts << ", kind "
        << int(got[i].kind) << " vs " << int(expect[i].kind) << ", tid " << got[i].tid << " vs "
        << expect[i].tid << ", arg0 " << got[i].arg0 << " vs " << expect[i].arg0 << " arg1 "
        << got[i].arg1 << " vs " << expect[i].arg1 << " cpu " << got[i].cpu << " vs "
        << expect[i].cpu << " pid " << got[i].pid << " vs " << expect[i].pid;
  }
}

// The ends of a message as script and report name them.
TEST(FormatsTrace, MessageEndsAreNamedLikeTheTools) {
  NetMessage m;
  m.proto = NetProto::Tcp;
  m.family = 4;
  const uint8_t lo4[4] = {127, 0, 0, 1};
  std::copy(std::begin(lo4), std::end(lo4), m.laddr);
  m.lport = 5000;
  m.pport = 40112;
  m.paddr[0] = 10;
  m.paddr[3] = 7;
  EXPECT_EQ(net_end(m, false), "127.0.0.1:5000");
  EXPECT_EQ(net_end(m, true), "10.0.0.7:40112");
  m.family = 6;
  std::fill(std::begin(m.laddr), std::end(m.laddr), 0);
  m.laddr[15] = 1;
  EXPECT_EQ(net_end(m, false), "[::1]:5000");
  std::fill(std::begin(m.paddr), std::end(m.paddr), 0);
  m.paddr[0] = 0xfe;
  m.paddr[1] = 0x80;
  m.paddr[15] = 2;
  EXPECT_EQ(net_end(m, true), "[fe80::2]:40112");
  m.paddr[10] = m.paddr[11] = 0xff;  // fe80::ffff:0:2 (the longest zero run wins)
  EXPECT_EQ(net_end(m, true), "[fe80::ffff:0:2]:40112");
  m.proto = NetProto::UnixStream;
  m.obj = 11;
  m.peer_obj = 12;
  EXPECT_EQ(net_end(m, false), "unix:11");
  EXPECT_EQ(net_end(m, true), "unix:12");
  m.proto = NetProto::Pipe;
  EXPECT_EQ(net_end(m, true), "pipe:11");
  // The event carries the fields both ways.
  Event e;
  set_net_message(e, m);
  EXPECT_EQ(e.kind, EventKind::Message);
  const NetMessage back = net_message(e);
  EXPECT_EQ(back.proto, NetProto::Pipe);
  EXPECT_EQ(back.obj, 11u);
  EXPECT_EQ(back.peer_obj, 12u);
}

TEST(FormatsTrace, EqualTimestampsKeepThreadOrder) {
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

// A thread whose time goes back (a reorder window too small) or whose
// process changes starts a new block: nothing is lost or altered.
TEST(FormatsTrace, TimeGoingBackStartsANewBlock) {
  TempFile f;
  {
    FakeClock c;
    TraceWriter w(f.path(), c.options());
    w.write_header(sample_header());
    w.write_probes({});
    std::vector<Event> batch = {ev(500, 1, EventKind::FuncEntry), ev(400, 1, EventKind::FuncExit)};
    Event other = ev(600, 1, EventKind::ThreadExit, 0);
    other.pid = 9;
    batch.push_back(other);
    w.write_events(batch);
    w.finish(sample_header(), {}, {});
  }
  TraceReader r(f.path());
  EXPECT_EQ(r.block_count(), 3u);
  auto events = all_events(r);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].ts, 500u);  // per thread: file order
  EXPECT_EQ(events[1].ts, 400u);
  EXPECT_EQ(events[2].pid, 9u);
}

TEST(FormatsTrace, LayoutHasPreambleAndTrailer) {
  TempFile f;
  write_sample(f.path());
  std::string b = f.bytes();
  ASSERT_GT(b.size(), 28u);
  EXPECT_EQ(std::memcmp(b.data(), "ATRACE\0\0", 8), 0);
  EXPECT_EQ(b.substr(8, 4), std::string("\x02\x00\x00\x00", 4));
  EXPECT_EQ(b.substr(12, 5), std::string("ATFR\x01", 5));  // the HEADER frame
  EXPECT_EQ(b.substr(b.size() - 8), "ATRACEND");
  uint64_t footer = 0;
  std::memcpy(&footer, b.data() + b.size() - 16, 8);  // little-endian host
  ASSERT_LT(footer, b.size());
  EXPECT_EQ(b.substr(footer, 5), std::string("ATFR\x05", 5));
}

TEST(FormatsTrace, UnknownFrameTypesAreSkipped) {
  TempFile f;
  write_sample(f.path(), /*finish=*/false);
  std::string b = f.bytes();
  // A frame of type 99 from "a newer minor version", appended.
  FrameEncoder enc(3);
  std::vector<uint8_t> frame;
  const uint8_t payload[] = {1, 2, 3};
  enc.append(frame, 99, {}, payload, false);
  b.append(frame.begin(), frame.end());
  b[10] = 5;  // version 2.5
  f.set_bytes(b);
  TraceReader r(f.path());
  EXPECT_FALSE(r.damaged());
  EXPECT_EQ(r.event_count(), 5u);
  EXPECT_EQ(r.version_minor(), 5);
  EXPECT_EQ(r.header().host, "box");
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
  f.set_bytes("ATRACE");
  EXPECT_THROW(TraceReader{f.path()}, TraceError);
}

TEST(FormatsTrace, NewerMajorVersionIsRefused) {
  TempFile f;
  write_sample(f.path());
  std::string b = f.bytes();
  b[8] = 3;
  b[10] = 1;
  f.set_bytes(b);
  try {
    TraceReader r(f.path());
    FAIL() << "no error";
  } catch (const TraceError& e) {
    EXPECT_EQ(
        std::string(e.what()).rfind(f.path() + ": trace format version 3.1 is newer than this "
                                               "atrace (2.0)",
                                    0),
        0u)
        << e.what();
  }
}

TEST(FormatsTrace, Version1IsNoLongerSupported) {
  TempFile f;
  f.set_bytes(std::string("ATRACE\0\0\x01\0\0\0", 12) + std::string(40, '\0'));
  try {
    TraceReader r(f.path());
    FAIL() << "no error";
  } catch (const TraceError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(f.path() + ": trace format version 1.0 is no longer "
                                                     "supported",
                                          0),
              0u)
        << e.what();
  }
}

TEST(FormatsTrace, HeaderOnlyFileReadsEmpty) {
  TempFile f;
  {
    TraceWriter w(f.path());
    w.write_header(sample_header());
    w.write_probes(sample_probes());
  }  // killed before any event
  TraceReader r(f.path());
  EXPECT_EQ(r.event_count(), 0u);
  EXPECT_EQ(r.probes().size(), 2u);
  EXPECT_TRUE(has_warning(r, "no index (recorder did not finish): rebuilt by scanning 0 blocks"));
  Event e;
  EXPECT_FALSE(r.next(e));
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
  if (std::filesystem::exists("/dev/full")) {
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
  EXPECT_STREQ(to_string(EventKind::Detach), "detach");
  EXPECT_STREQ(to_string(EventKind::Unwind), "unwind");
  EXPECT_STREQ(to_string(EventKind::Gap), "lost");
  EXPECT_STREQ(to_string(UnwindHow::Caught), "caught");
  EXPECT_STREQ(to_string(UnwindHow::ThreadExit), "thread-exit");
  EXPECT_STREQ(to_string(UnwindHow::Abandoned), "abandoned");
  EXPECT_STREQ(to_string(UnwindHow::NestingLimit), "nesting-limit");
  EXPECT_STREQ(to_string(static_cast<UnwindHow>(9)), "unknown");
  EXPECT_STREQ(to_string(DetachReason::Absolute), "absolute");
  EXPECT_STREQ(to_string(DetachReason::Relative), "relative");
  EXPECT_STREQ(to_string(DetachReason::MaxCalls), "max-calls");
  EXPECT_STREQ(to_string(DetachReason::User), "user");
  EXPECT_STREQ(to_string(DetachReason::Budget), "budget");
  EXPECT_STREQ(to_string(detach_reason(0)), "unknown");
  EXPECT_STREQ(to_string(DetachReason::PatchedInstead), "patched instead");
  EXPECT_STREQ(to_string(detach_reason(7)), "unknown");  // a newer writer's rule
  EXPECT_FALSE(is_kernel_kind(EventKind::Detach));
  EXPECT_TRUE(is_kernel_kind(EventKind::Comm));
}

// DETACH (kind 27) is laid out as FORMAT.md says: varint probe_id, u8
// reason, varint calls, varint total_ns, after the length; a payload longer
// than that (a newer minor's field) still decodes.
TEST(FormatsTrace, DetachPayloadIsAsSpecified) {
  Event d;
  d.ts = 1000;
  d.pid = 4242;
  d.tid = 0;
  d.cpu = 1;
  d.kind = EventKind::Detach;
  d.id = 300;
  d.flags = static_cast<uint8_t>(DetachReason::MaxCalls);
  d.arg0 = 128;
  d.arg1 = 1;
  BlockBuilder b;
  b.add(d);
  std::vector<uint8_t> bytes(b.payload().begin(), b.payload().end());
  std::vector<uint8_t> expect = {27 | v2::kFlagCpu, 0, 1, 6, 0xac, 0x02, 3, 0x80, 0x01, 1};
  EXPECT_EQ(bytes, expect);

  std::vector<uint8_t> longer = {27, 0, 6, 5, 4, 9, 2, 0xff, 0xff};  // 2 bytes to skip
  BlockCursor c;
  c.reset(BlockMeta{0, 4242, 500, 500, 1}, longer);
  UnknownKindCounts unknown{};
  Event got;
  ASSERT_TRUE(c.next(got, unknown));
  EXPECT_EQ(got.kind, EventKind::Detach);
  EXPECT_EQ(got.id, 5u);
  EXPECT_EQ(got.flags, 4);
  EXPECT_EQ(got.arg0, 9u);
  EXPECT_EQ(got.arg1, 2u);
  EXPECT_EQ(got.tid, 0u);
  EXPECT_EQ(got.pid, 4242u);
  EXPECT_FALSE(c.next(got, unknown));
}

// "-" reads stdin, a pipe that cannot seek: spooled to a temporary file.
TEST(FormatsTrace, ReadsAPipeOnStdin) {
  TempFile f;
  write_sample(f.path());
  const std::string bytes = f.bytes();
  ASSERT_LT(bytes.size(), 60000u);  // fits in a pipe's buffer: no writer thread needed
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ASSERT_EQ(::write(fds[1], bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  ::close(fds[1]);
  int saved = ::dup(STDIN_FILENO);
  ::dup2(fds[0], STDIN_FILENO);
  ::close(fds[0]);
  std::vector<Event> events;
  uint64_t count = 0;
  try {
    TraceReader r("-");
    count = r.event_count();
    events = all_events(r);
  } catch (...) {
    ::dup2(saved, STDIN_FILENO);
    ::close(saved);
    throw;
  }
  ::dup2(saved, STDIN_FILENO);
  ::close(saved);
  EXPECT_EQ(count, 5u);
  EXPECT_EQ(events.size(), 5u);
}

// Nested calls: exits that return from the block's innermost open entry are
// written without their id (FUNC_RETURN); exits whose entry was in an earlier
// block or never recorded keep it. Either way the reader gives the same ids.
TEST(FormatsTrace, ExitsOfOpenEntriesRoundTripWithoutTheirIds) {
  TempFile f;
  std::vector<Event> written;
  uint64_t ts = 100;
  auto add = [&](EventKind k, uint32_t id) { written.push_back(ev(ts += 7, 1, k, id)); };
  add(EventKind::FuncExit, 9);  // its entry was never recorded
  std::mt19937 rng(5);
  std::vector<uint32_t> stack;
  for (int i = 0; i < 20000; i++) {
    if (stack.empty() || (stack.size() < 6 && rng() % 2)) {
      stack.push_back(1 + rng() % 5);
      add(EventKind::FuncEntry, stack.back());
    } else {
      if (rng() % 50 == 0 && stack.size() > 1) stack.pop_back();  // a lost exit
      add(EventKind::FuncExit, stack.back());
      stack.pop_back();
    }
  }
  for (; !stack.empty(); stack.pop_back()) add(EventKind::FuncExit, stack.back());
  add(EventKind::ThreadExit, 0);
  uint64_t compact = 0, plain = 0;
  for (size_t block_bytes : {size_t{200}, size_t{1} << 20}) {  // entries in earlier blocks, or not
    FakeClock c;
    TraceWriter w(f.path(), c.options(block_bytes));
    w.write_header(sample_header());
    w.write_probes(sample_probes());
    w.write_events(written);
    w.finish(sample_header(), {}, {});
    (block_bytes > 200 ? compact : plain) = w.bytes_written();
    TraceReader r(f.path());
    auto got = all_events(r);
    ASSERT_EQ(got.size(), written.size());
    for (size_t i = 0; i < got.size(); i++) ASSERT_TRUE(same(got[i], written[i])) << i;
  }
  EXPECT_LT(compact, plain);
}
