// `atrace script`'s lines (docs/script.md): exact text for every event kind,
// call-depth indentation, --fields, thread names, global time order. The
// traces are written with TraceWriter and read back, as the command does.
#include <gtest/gtest.h>

#include <sstream>

#include "output/script_format.h"
#include "tests/unit/test_formats_util.h"

using namespace atrace::formats;
using namespace atrace::formats::testing;
using atrace::analysis::ScriptField;
using atrace::analysis::ScriptFormatter;

namespace {

const std::vector<ThreadInfo> kThreads = {{4242, 4242, "demo", 0, 0, 0},
                                          {4243, 4242, "worker", 0, 0, 0}};

// Writes `events` (one batch, in time order per thread) as a trace file.
void write_trace(const std::string& path, const std::vector<Event>& events,
                 const std::vector<ThreadInfo>& threads = kThreads) {
  TraceWriter w(path);
  w.write_header(sample_header());
  w.write_probes(sample_probes());
  w.write_events(events);
  w.finish(sample_header(), threads, {});
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The lines `atrace script` prints for the file, with the given columns.
std::vector<std::string> script(const std::string& path, std::vector<ScriptField> fields) {
  TraceReader r(path);
  ScriptFormatter f(r.header(), r.probes(), r.threads(), std::move(fields));
  std::string out;
  Event e;
  while (r.next(e)) f.format(e, out);
  return split_lines(out);
}

std::vector<std::string> script(const std::string& path) {
  return script(path, atrace::analysis::default_script_fields());
}

std::vector<std::string> details(const std::string& path) {
  return script(path, {ScriptField::Kind, ScriptField::Details});
}

Event kernel(uint64_t ts, uint32_t tid, EventKind kind, uint64_t arg0 = 0, uint64_t arg1 = 0,
             uint8_t flags = 0) {
  Event e = ev(ts, tid, kind, 0, 1);
  e.arg0 = arg0;
  e.arg1 = arg1;
  e.flags = flags;
  return e;
}

Event text_event(uint64_t ts, uint32_t tid, EventKind kind, std::string text) {
  Event e = ev(ts, tid, kind, 0, 1);
  e.text = std::move(text);
  return e;
}

constexpr uint64_t kT = 1234000001000ull;  // 1234.000001000 s

}  // namespace

TEST(ScriptFormat, DefaultColumnsAreCommTidCpuTimeKindDetails) {
  TempFile f;
  write_trace(f.path(), {ev(kT, 4242, EventKind::FuncEntry, 1, 1),
                         ev(kT + 2500, 4242, EventKind::FuncExit, 1, 12)});
  EXPECT_EQ(
      script(f.path()),
      (std::vector<std::string>{
          "            demo    4242 [001]  1234.000001000: entry:        compute(int)",
          "            demo    4242 [012]  1234.000003500: exit:         compute(int) (2.50 us)",
      }));
}

TEST(ScriptFormat, EntriesAndExitsAreIndentedByCallDepth) {
  TempFile f;
  write_trace(f.path(), {
                            ev(kT + 0, 4242, EventKind::FuncEntry, 1),
                            ev(kT + 100, 4242, EventKind::FuncEntry, 2),  // deflate, in libz
                            ev(kT + 200, 4242, EventKind::FuncEntry, 1),  // recursion
                            ev(kT + 300, 4242, EventKind::FuncExit, 1),
                            ev(kT + 400, 4242, EventKind::FuncExit, 2),
                            ev(kT + 1000, 4242, EventKind::FuncExit, 1),
                        });
  EXPECT_EQ(details(f.path()), (std::vector<std::string>{
                                   "entry:        compute(int)",
                                   "entry:          deflate [libz.so.1]",
                                   "entry:            compute(int)",
                                   "exit:             compute(int) (100 ns)",
                                   "exit:           deflate [libz.so.1] (300 ns)",
                                   "exit:         compute(int) (1.00 us)",
                               }));
}

// The same rules as the profile: an exit pops to its entry (frames above it
// were skipped by longjmp or an exception), an exit without entry is shown
// where the stack is, without a duration, and thread exit ends open calls.
TEST(ScriptFormat, ImperfectStacks) {
  TempFile f;
  write_trace(f.path(), {
                            ev(kT + 0, 4242, EventKind::FuncExit, 2),  // entered before recording
                            ev(kT + 10, 4242, EventKind::FuncEntry, 1),
                            ev(kT + 20, 4242, EventKind::FuncEntry, 2),
                            ev(kT + 30, 4242, EventKind::FuncEntry, 2),
                            ev(kT + 40, 4242, EventKind::FuncExit, 1),  // skips both deflates
                            ev(kT + 50, 4242, EventKind::FuncEntry, 1),
                            ev(kT + 60, 4242, EventKind::FuncEntry, 7),  // not in the probe table
                            ev(kT + 70, 4242, EventKind::ThreadExit, 0),
                            ev(kT + 80, 4242, EventKind::FuncEntry, 1),
                        });
  EXPECT_EQ(details(f.path()), (std::vector<std::string>{
                                   "exit:         deflate [libz.so.1]",
                                   "entry:        compute(int)",
                                   "entry:          deflate [libz.so.1]",
                                   "entry:            deflate [libz.so.1]",
                                   "exit:         compute(int) (30 ns)",
                                   "entry:        compute(int)",
                                   "entry:          <probe 7>",
                                   "thread-exit:  unfinished=2",
                                   "entry:        compute(int)",
                               }));
}

// An unwound call ends at its UNWIND event, at its entry's depth, with how.
TEST(ScriptFormat, UnwoundCalls) {
  auto unwind = [](uint64_t ts, uint32_t id, UnwindHow how) {
    Event e = ev(ts, 4242, EventKind::Unwind, id);
    e.flags = static_cast<uint8_t>(how);
    return e;
  };
  TempFile f;
  write_trace(f.path(), {
                            ev(kT + 0, 4242, EventKind::FuncEntry, 1),
                            ev(kT + 100, 4242, EventKind::FuncEntry, 2),
                            ev(kT + 200, 4242, EventKind::FuncEntry, 1),
                            unwind(kT + 500, 1, UnwindHow::Caught),
                            unwind(kT + 500, 2, UnwindHow::Caught),
                            ev(kT + 1000, 4242, EventKind::FuncExit, 1),
                            ev(kT + 1100, 4242, EventKind::FuncEntry, 2),
                            unwind(kT + 1200, 2, UnwindHow::ThreadExit),
                        });
  EXPECT_EQ(details(f.path()), (std::vector<std::string>{
                                   "entry:        compute(int)",
                                   "entry:          deflate [libz.so.1]",
                                   "entry:            compute(int)",
                                   "unwind:           compute(int) (300 ns) caught",
                                   "unwind:         deflate [libz.so.1] (400 ns) caught",
                                   "exit:         compute(int) (1.00 us)",
                                   "entry:        deflate [libz.so.1]",
                                   "unwind:       deflate [libz.so.1] (100 ns) thread-exit",
                               }));
}

// Issue 18: where a thread lost events, one line; the calls open there end
// unfinished, and an exit after it is at depth 0 without a duration (its
// entry is before the gap or was lost), not paired with an older entry.
TEST(ScriptFormat, ALineWhereAThreadLostEvents) {
  Event gap = ev(kT + 300, 4242, EventKind::Gap, 0);
  gap.arg0 = 3;
  TempFile f;
  write_trace(f.path(), {
                            ev(kT + 0, 4242, EventKind::FuncEntry, 1),
                            ev(kT + 100, 4242, EventKind::FuncEntry, 1),
                            gap,
                            ev(kT + 400, 4242, EventKind::FuncExit, 1),
                            ev(kT + 500, 4242, EventKind::FuncEntry, 2),
                            ev(kT + 600, 4242, EventKind::FuncExit, 2),
                        });
  EXPECT_EQ(details(f.path()), (std::vector<std::string>{
                                   "entry:        compute(int)",
                                   "entry:          compute(int)",
                                   "lost:         events=3 unfinished=2",
                                   "exit:         compute(int)",
                                   "entry:        deflate [libz.so.1]",
                                   "exit:         deflate [libz.so.1] (100 ns)",
                               }));
}

TEST(ScriptFormat, RunawayDepthIsIndentedAsTheMaximum) {
  TempFile f;
  std::vector<Event> events;
  for (uint64_t i = 0; i < 200; i++) events.push_back(ev(kT + i, 4242, EventKind::FuncEntry, 1));
  write_trace(f.path(), events);
  auto lines = script(f.path(), {ScriptField::Details});
  ASSERT_EQ(lines.size(), 200u);
  EXPECT_EQ(lines[10], std::string(20, ' ') + "compute(int)");
  EXPECT_EQ(lines[199], std::string(2 * atrace::analysis::kMaxIndentDepth, ' ') + "compute(int)");
}

TEST(ScriptFormat, EveryKernelKind) {
  TempFile f;
  write_trace(f.path(),
              {
                  kernel(kT + 0, 4242, EventKind::SchedSwitchOut, 4243, 0, 1),
                  kernel(kT + 1, 4242, EventKind::SchedSwitchOut, 0, 0, 0),
                  kernel(kT + 2, 4242, EventKind::SchedSwitchOut, 17, 0, 2),
                  kernel(kT + 3, 4242, EventKind::SchedSwitchOut, 17, 0, 0x81),
                  kernel(kT + 4, 4242, EventKind::SchedSwitchIn, 4243),
                  kernel(kT + 5, 4242, EventKind::SchedWakeup, 4243, 1),
                  kernel(kT + 6, 4242, EventKind::SchedMigrate, 0, 1),
                  kernel(kT + 7, 4242, EventKind::SyscallEnter, 110),
                  kernel(kT + 819, 4242, EventKind::SyscallExit, 110, 4241),
                  kernel(kT + 900, 4242, EventKind::PageFault, 0x7f0000001000, 0x401136,
                         kFaultWrite | kFaultUser | kFaultMajor),
                  kernel(kT + 901, 4242, EventKind::PageFault, 0x1000, 0xffffffff81000000),
                  kernel(kT + 902, 4242, EventKind::ProcFork, 4242, 4250, kForkThread),
                  kernel(kT + 903, 4242, EventKind::ProcFork, 4300, 4300, 0),
                  text_event(kT + 904, 4242, EventKind::ProcExec, "/usr/bin/true"),
                  kernel(kT + 905, 4242, EventKind::ProcExit, 3 << 8),  // exit(3)
                  kernel(kT + 905, 4242, EventKind::ProcExit, 9),       // SIGKILL
                  kernel(kT + 905, 4242, EventKind::ProcExit, 0x80 | 11),
                  kernel(kT + 905, 4242, EventKind::ProcExit, static_cast<uint64_t>(-1)),
                  text_event(kT + 906, 4242, EventKind::Comm, "renamed"),
                  kernel(kT + 907, 4242, EventKind::ThreadExit),
                  kernel(kT + 908, 4242, EventKind::SchedSwitchOut, 0, 0, 0x80),
              });
  EXPECT_EQ(details(f.path()), (std::vector<std::string>{
                                   "switch-out:   state=S next=4243",
                                   "switch-out:   state=R next=0",
                                   "switch-out:   state=D next=17",
                                   "switch-out:   state=0x81 next=17",
                                   "switch-in:    prev=4243",
                                   "wakeup:       waker=4243 target_cpu=1",
                                   "migrate:      orig_cpu=0 dest_cpu=1",
                                   "syscall:      getppid",
                                   "syscall-exit: getppid = 4241 (812 ns)",
                                   "fault:        addr=0x7f0000001000 ip=0x401136 write user major",
                                   "fault:        addr=0x1000 ip=0xffffffff81000000 read kernel",
                                   "fork:         thread tid=4250",
                                   "fork:         process pid=4300",
                                   "exec:         /usr/bin/true",
                                   "proc-exit:    code=3",
                                   "proc-exit:    signal=SIGKILL",
                                   "proc-exit:    signal=SIGSEGV core",
                                   "proc-exit:    status=-1",
                                   "comm:         renamed",
                                   "thread-exit:",
                                   "switch-out:   state=x next=0",
                               }));
}

// A relevance filter's decision: written by the recorder in a block of tid 0
// (no thread, so no thread's name), reasons it does not know as "unknown".
TEST(ScriptFormat, DetachLinesNameTheFunctionRuleCallsAndMean) {
  TempFile f;
  auto detach = [](uint64_t ts, uint32_t id, uint8_t reason, uint64_t calls, uint64_t total) {
    Event e = ev(ts, 0, EventKind::Detach, id, 1);
    e.flags = reason;
    e.arg0 = calls;
    e.arg1 = total;
    return e;
  };
  write_trace(f.path(), {
                            ev(kT + 0, 4242, EventKind::FuncEntry, 1, 1),
                            detach(kT + 5, 1, 1, 1000, 1200000),
                            detach(kT + 6, 2, 3, 50000, 25000000),  // libz: module shown
                            detach(kT + 7, 9, 4, 0, 0),             // not in the probe table
                            detach(kT + 8, 1, 200, 3, 3000),        // a newer writer's rule
                            ev(kT + 10, 4242, EventKind::FuncExit, 1, 1),
                        });
  auto lines = script(f.path());
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_EQ(lines[1],
            "        [atrace]       0 [001]  1234.000001005: detach:       compute(int) "
            "rule=absolute calls=1000 mean=1.20us");
  EXPECT_EQ(lines[2].substr(lines[2].find("detach:")),
            "detach:       deflate [libz.so.1] rule=max-calls calls=50000 mean=500ns");
  EXPECT_EQ(lines[3].substr(lines[3].find("detach:")),
            "detach:       <probe 9> rule=user calls=0 mean=0ns");
  EXPECT_EQ(lines[4].substr(lines[4].find("detach:")),
            "detach:       compute(int) rule=unknown calls=3 mean=1.00us");
  // The thread's call is untouched by the decision.
  EXPECT_EQ(lines[5].substr(lines[5].find("exit:")), "exit:         compute(int) (10 ns)");
}

TEST(ScriptFormat, SyscallReturnValues) {
  TempFile f;
  auto neg = [](int64_t v) { return static_cast<uint64_t>(v); };
  write_trace(f.path(),
              {
                  kernel(kT + 0, 4242, EventKind::SyscallEnter, 257),  // openat
                  kernel(kT + 2000, 4242, EventKind::SyscallExit, 257, neg(-2)),
                  kernel(kT + 3000, 4242, EventKind::SyscallEnter, 9),  // mmap
                  kernel(kT + 4000, 4242, EventKind::SyscallExit, 9, 0x7f12345000),
                  kernel(kT + 5000, 4242, EventKind::SyscallExit, 0, neg(-512)),  // no enter
                  kernel(kT + 6000, 4242, EventKind::SyscallEnter, 0),
                  kernel(kT + 7000, 4242, EventKind::SyscallExit, 1, neg(-4000)),  // other nr
                  kernel(kT + 8000, 4242, EventKind::SyscallExit, 99999, 3),
                  // rt_sigreturn and uretprobe return with their number set to -1
                  kernel(kT + 9000, 4242, EventKind::SyscallEnter, 15),
                  kernel(kT + 9100, 4242, EventKind::SyscallExit, neg(-1), 42),
                  kernel(kT + 9200, 4242, EventKind::SyscallExit, neg(-1), 0),
              });
  EXPECT_EQ(details(f.path()), (std::vector<std::string>{
                                   "syscall:      openat",
                                   "syscall-exit: openat = -2 ENOENT (2.00 us)",
                                   "syscall:      mmap",
                                   "syscall-exit: mmap = 0x7f12345000 (1.00 us)",
                                   "syscall-exit: read = -512 ERESTARTSYS",
                                   "syscall:      read",
                                   "syscall-exit: write = -4000",
                                   "syscall-exit: syscall_99999 = 3",
                                   "syscall:      rt_sigreturn",
                                   "syscall-exit: rt_sigreturn = 42 (100 ns)",
                                   "syscall-exit: syscall_-1 = 0",
                               }));
}

// The comm column: the thread table's name, the new name after a rename
// (the rename's own line still shows the old one), the parent's name for a
// task the table does not know, ":TID" when nothing is known.
TEST(ScriptFormat, CommFollowsRenamesAndForks) {
  TempFile f;
  Event stranger = ev(kT + 6, 777, EventKind::FuncEntry, 1, 0);
  stranger.pid = 777;
  write_trace(f.path(),
              {
                  ev(kT + 0, 4243, EventKind::FuncEntry, 1, 0),
                  text_event(kT + 1, 4243, EventKind::Comm, "io\nthread"),
                  ev(kT + 2, 4243, EventKind::FuncExit, 1, 0),
                  kernel(kT + 3, 4243, EventKind::ProcFork, 4242, 4250, kForkThread),
                  ev(kT + 4, 4250, EventKind::FuncEntry, 1, 0),
                  ev(kT + 5, 4251, EventKind::FuncEntry, 1, 0),  // process known, thread not
                  stranger,
              });
  auto lines = script(f.path(), {ScriptField::Comm, ScriptField::Tid, ScriptField::Kind});
  EXPECT_EQ(lines, (std::vector<std::string>{
                       "          worker    4243 entry:",
                       "          worker    4243 comm:",
                       "    io\\x0athread    4243 exit:",
                       "    io\\x0athread    4243 fork:",
                       "    io\\x0athread    4250 entry:",
                       "            demo    4251 entry:",
                       "            :777     777 entry:",
                   }));
}

TEST(ScriptFormat, FieldsPickAndOrderColumns) {
  TempFile f;
  Event e = ev(kT, 4243, EventKind::FuncEntry, 1, 3);
  write_trace(f.path(), {e});
  EXPECT_EQ(script(f.path(),
                   {ScriptField::Time, ScriptField::Pid, ScriptField::Tid, ScriptField::Details}),
            (std::vector<std::string>{" 1234.000001000:    4242    4243 compute(int)"}));
  EXPECT_EQ(script(f.path(), {ScriptField::Details, ScriptField::Cpu, ScriptField::Kind}),
            (std::vector<std::string>{"compute(int) [003] entry:"}));
  // A kind with nothing after it is not padded, and neither are empty details.
  write_trace(f.path(), {kernel(kT, 4243, EventKind::ThreadExit)});
  EXPECT_EQ(
      script(f.path()),
      (std::vector<std::string>{"          worker    4243 [001]  1234.000001000: thread-exit:"}));
}

TEST(ScriptFormat, ParseFields) {
  using atrace::analysis::parse_script_fields;
  std::string err;
  auto f = parse_script_fields("time,comm,tid,pid,cpu,kind,details", err);
  ASSERT_TRUE(f);
  EXPECT_EQ(*f, (std::vector<ScriptField>{ScriptField::Time, ScriptField::Comm, ScriptField::Tid,
                                          ScriptField::Pid, ScriptField::Cpu, ScriptField::Kind,
                                          ScriptField::Details}));
  f = parse_script_fields("tid,tid,details", err);
  ASSERT_TRUE(f);
  EXPECT_EQ(*f, (std::vector<ScriptField>{ScriptField::Tid, ScriptField::Details}));
  // perf's edits of the default list.
  f = parse_script_fields("+pid,-cpu", err);
  ASSERT_TRUE(f);
  EXPECT_EQ(*f,
            (std::vector<ScriptField>{ScriptField::Comm, ScriptField::Tid, ScriptField::Pid,
                                      ScriptField::Time, ScriptField::Kind, ScriptField::Details}));

  EXPECT_FALSE(parse_script_fields("tid,colour", err));
  EXPECT_EQ(err,
            "--fields: unknown field 'colour' (known: comm, tid, pid, cpu, time, kind, details)");
  EXPECT_FALSE(parse_script_fields("tid,,time", err));
  EXPECT_NE(err.find("empty field name"), std::string::npos) << err;
  EXPECT_FALSE(parse_script_fields("", err));
  EXPECT_FALSE(parse_script_fields("+pid,cpu", err));
  EXPECT_NE(err.find("not both"), std::string::npos) << err;
  EXPECT_FALSE(parse_script_fields("-comm,-tid,-cpu,-time,-kind,-details", err));
  EXPECT_NE(err.find("no field left"), std::string::npos) << err;
  EXPECT_EQ(err.find('\n'), std::string::npos);
}

// Threads written in separate blocks come out merged by time, and each
// thread's indentation is its own.
TEST(ScriptFormat, GlobalTimeOrderAcrossThreads) {
  TempFile f;
  {
    FakeClock clock;
    TraceWriter w(f.path(), clock.options(/*block_bytes=*/256));
    w.write_header(sample_header());
    w.write_probes(sample_probes());
    for (uint32_t tid : {4242u, 4243u, 4244u}) {
      std::vector<Event> batch;
      for (uint64_t i = 0; i < 300; i++)
        batch.push_back(ev(kT + i * 10 + tid % 3, tid,
                           i % 2 ? EventKind::FuncExit : EventKind::FuncEntry, 1,
                           static_cast<uint16_t>(tid % 2)));
      w.write_events(batch);
    }
    w.finish(sample_header(), kThreads, {});
  }
  auto lines = script(f.path(), {ScriptField::Time, ScriptField::Tid, ScriptField::Details});
  ASSERT_EQ(lines.size(), 900u);
  std::string prev;
  for (size_t i = 0; i < lines.size(); i++) {
    std::string time = lines[i].substr(0, lines[i].find(':'));
    EXPECT_LE(prev, time) << "line " << i;  // same width: text order is time order
    prev = time;
  }
  EXPECT_EQ(lines[0], " 1234.000001000:    4242 compute(int)");
  EXPECT_EQ(lines[1], " 1234.000001001:    4243 compute(int)");
  EXPECT_EQ(lines[2], " 1234.000001002:    4244 compute(int)");
  EXPECT_EQ(lines[3], " 1234.000001010:    4242 compute(int) (10 ns)");
}
