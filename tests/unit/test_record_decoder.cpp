// RecordDecoder: the programs' records (bpf/atrace.h), built here byte for
// byte as the BPF side writes them, become the trace's events with every
// field in its place; short and unknown records are refused, not read past.
#include <gtest/gtest.h>

#include <cstring>

#include "bpf/atrace.h"
#include "bpf/unwind.h"
#include "record/record_decoder.h"

namespace atrace {
namespace {

using Type = DecodedRecord::Type;

atrace_rec_hdr hdr(uint16_t kind, uint32_t id = 0) {
  atrace_rec_hdr h{};
  h.ts = 123456789;
  h.tgid = 4242;
  h.tid = 4243;
  h.id = id;
  h.cpu = 3;
  h.kind = kind;
  return h;
}

template <typename R>
DecodedRecord decode(const R& rec, RecordDecoder d = RecordDecoder()) {
  return d.decode(&rec, sizeof rec);
}

TEST(RecordDecoder, FunctionEntryAndExit) {
  for (uint16_t kind : {uint16_t{ATRACE_REC_FUNC_ENTRY}, uint16_t{ATRACE_REC_FUNC_EXIT}}) {
    DecodedRecord r = decode(hdr(kind, 17));
    ASSERT_EQ(r.type, Type::Event);
    EXPECT_EQ(r.event.kind, kind == ATRACE_REC_FUNC_ENTRY ? formats::EventKind::FuncEntry
                                                          : formats::EventKind::FuncExit);
    EXPECT_EQ(r.event.ts, 123456789u);
    EXPECT_EQ(r.event.pid, 4242u);
    EXPECT_EQ(r.event.tid, 4243u);
    EXPECT_EQ(r.event.cpu, 3u);
    EXPECT_EQ(r.event.id, 17u);
    EXPECT_FALSE(r.names_thread);
  }
}

TEST(RecordDecoder, ThreadNamesFromExitAndRename) {
  atrace_rec_comm c{};
  c.hdr = hdr(ATRACE_REC_COMM);
  std::memcpy(c.comm, "worker-1", 9);
  DecodedRecord r = decode(c);
  ASSERT_EQ(r.type, Type::Event);
  EXPECT_EQ(r.event.kind, formats::EventKind::Comm);
  EXPECT_EQ(r.event.text, "worker-1");
  EXPECT_TRUE(r.names_thread);
  EXPECT_EQ(r.thread_name, "worker-1");

  // A thread exit names the thread but carries no text; a name that fills
  // the array without a NUL is cut at its end.
  c.hdr = hdr(ATRACE_REC_THREAD_EXIT);
  std::memset(c.comm, 'x', sizeof c.comm);
  r = decode(c);
  ASSERT_EQ(r.type, Type::Event);
  EXPECT_EQ(r.event.kind, formats::EventKind::ThreadExit);
  EXPECT_TRUE(r.event.text.empty());
  EXPECT_EQ(r.thread_name, std::string(ATRACE_COMM_LEN, 'x'));
}

TEST(RecordDecoder, KernelEventsKeepTheirNumbers) {
  atrace_rec_args a{};
  a.hdr = hdr(ATRACE_REC_SYS_EXIT);
  a.arg0 = 1;                           // write
  a.arg1 = static_cast<uint64_t>(-11);  // -EAGAIN
  DecodedRecord r = decode(a);
  ASSERT_EQ(r.type, Type::Event);
  EXPECT_EQ(r.event.kind, formats::EventKind::SyscallExit);
  EXPECT_EQ(r.event.arg0, 1u);
  EXPECT_EQ(r.event.sarg1(), -11);

  a.hdr = hdr(ATRACE_REC_FAULT, formats::kFaultWrite | formats::kFaultUser);  // flags in the id
  a.arg0 = 0x7fff0000;
  a.arg1 = 0x401000;
  r = decode(a);
  ASSERT_EQ(r.type, Type::Event);
  EXPECT_EQ(r.event.kind, formats::EventKind::PageFault);
  EXPECT_EQ(r.event.flags, formats::kFaultWrite | formats::kFaultUser);
  EXPECT_EQ(r.event.id, 0u);
  EXPECT_EQ(r.event.arg0, 0x7fff0000u);
  EXPECT_EQ(r.event.arg1, 0x401000u);
}

TEST(RecordDecoder, ExecAndUnwind) {
  atrace_rec_exec e{};
  e.hdr = hdr(ATRACE_REC_EXEC);
  std::memcpy(e.filename, "/usr/bin/true", 14);
  DecodedRecord r = decode(e);
  ASSERT_EQ(r.type, Type::Event);
  EXPECT_EQ(r.event.kind, formats::EventKind::ProcExec);
  EXPECT_EQ(r.event.text, "/usr/bin/true");

  atrace_rec_args u{};
  u.hdr = hdr(ATRACE_REC_UNWIND, 5);
  u.arg0 = static_cast<uint64_t>(formats::UnwindHow::Caught);
  r = decode(u);
  ASSERT_EQ(r.type, Type::Event);
  EXPECT_EQ(r.event.kind, formats::EventKind::Unwind);
  EXPECT_EQ(r.event.id, 5u);
  EXPECT_EQ(r.event.flags, static_cast<uint8_t>(formats::UnwindHow::Caught));
  EXPECT_EQ(r.event.arg0, 0u);  // the unwind guard's: no entry time

  // The function programs' (a call the thread left): named by its entry time.
  atrace_rec_unwind g{};
  g.a.hdr = hdr(ATRACE_REC_UNWIND, 6);
  g.a.arg0 = ATRACE_UNWIND_NESTING_LIMIT;
  g.a.arg1 = 0x7ffc0000;
  g.entry_ts = 12345;
  r = decode(g);
  ASSERT_EQ(r.type, Type::Event);
  EXPECT_EQ(r.event.kind, formats::EventKind::Unwind);
  EXPECT_EQ(r.event.id, 6u);
  EXPECT_EQ(r.event.flags, static_cast<uint8_t>(formats::UnwindHow::NestingLimit));
  EXPECT_EQ(r.event.arg0, 12345u);
}

// A module hook's record: the watched module's path and build id, by index.
TEST(RecordDecoder, ModuleLoadAndUnload) {
  RecordDecoder d({}, {{"/lib/a.so", "aa"}, {"/opt/b.so", "bb01"}});
  atrace_rec_module m{};
  m.hdr = hdr(ATRACE_REC_MODULE_LOAD, 1);
  m.base = 0x7f0000000000;
  DecodedRecord r = d.decode(&m, sizeof m);
  ASSERT_EQ(r.type, Type::Event);
  EXPECT_EQ(r.event.kind, formats::EventKind::ModuleLoad);
  EXPECT_EQ(r.event.text, "/opt/b.so");
  EXPECT_EQ(r.event.arg0, 0x7f0000000000u);
  EXPECT_EQ(formats::module_build_id(r.event), "bb01");
  m.hdr = hdr(ATRACE_REC_MODULE_UNLOAD, 7);  // an index it does not know
  r = d.decode(&m, sizeof m);
  ASSERT_EQ(r.type, Type::Event);
  EXPECT_EQ(r.event.kind, formats::EventKind::ModuleUnload);
  EXPECT_EQ(r.event.text, "?");
  EXPECT_EQ(r.event.id, 0u);
}

// A thread's GAP record (issue 18): its events lost just before, counted.
// The record's kind number is not the file's: the decoder maps it.
TEST(RecordDecoder, GapCarriesTheThreadsLostCount) {
  atrace_rec_args g{};
  g.hdr = hdr(ATRACE_REC_GAP);
  g.arg0 = 17;
  DecodedRecord r = decode(g);
  ASSERT_EQ(r.type, Type::Event);
  EXPECT_EQ(r.event.kind, formats::EventKind::Gap);
  EXPECT_EQ(r.event.arg0, 17u);
  EXPECT_EQ(r.event.tid, 4243u);
  EXPECT_EQ(r.event.ts, 123456789u);
  EXPECT_EQ(r.event.id, 0u);
}

// Integers at the size and sign of the probe's note; strings as copied.
TEST(RecordDecoder, UsdtArgumentsBySizeSignAndString) {
  uprobes::UsdtTarget t;
  t.id = 9;
  t.sites.resize(1);
  t.sites[0].arg_list = {{4, true, "%edi"}, {2, false, "%si"}, {8, false, "%rdx"}};
  RecordDecoder d({t});

  atrace_rec_usdt_str s{};
  s.u.hdr = hdr(ATRACE_REC_USDT, 9);
  s.u.nargs = 3;
  s.u.str_mask = 1u << 2;                            // the third argument is a string
  s.u.args[0] = static_cast<uint64_t>(int64_t{-2});  // bpf_usdt_arg() extended it
  s.u.args[1] = 0xffffffffffff8001ull;               // unsigned 16 bits: 0x8001
  s.u.args[2] = 0x7ffd0000;                          // the string's address
  std::memcpy(s.str[0], "GET /", 6);
  DecodedRecord r = d.decode(&s, sizeof s);
  ASSERT_EQ(r.type, Type::Event);
  EXPECT_EQ(r.event.kind, formats::EventKind::Usdt);
  EXPECT_EQ(r.event.id, 9u);
  ASSERT_EQ(r.event.args.size(), 3u);
  EXPECT_EQ(r.event.args[0].size, 4u);
  EXPECT_TRUE(r.event.args[0].is_signed);
  EXPECT_EQ(r.event.args[0].svalue(), -2);
  EXPECT_EQ(r.event.args[1].size, 2u);
  EXPECT_EQ(r.event.args[1].value, 0x8001u);
  EXPECT_TRUE(r.event.args[2].is_string);
  EXPECT_EQ(r.event.args[2].str, "GET /");

  // Without the string part (no string argument), and for a probe the
  // decoder was not told about: 8-byte unsigned integers.
  atrace_rec_usdt plain{};
  plain.hdr = hdr(ATRACE_REC_USDT, 10);
  plain.nargs = 1;
  plain.args[0] = 0xffffffffffffffffull;
  r = d.decode(&plain, sizeof plain);
  ASSERT_EQ(r.type, Type::Event);
  ASSERT_EQ(r.event.args.size(), 1u);
  EXPECT_EQ(r.event.args[0].size, 8u);
  EXPECT_FALSE(r.event.args[0].is_signed);
  EXPECT_EQ(r.event.args[0].value, 0xffffffffffffffffull);
}

TEST(RecordDecoder, FilterHintIsNotAnEvent) {
  EXPECT_EQ(decode(hdr(ATRACE_REC_FILTER_HINT, 3)).type, Type::FilterHint);
}

TEST(RecordDecoder, ShortAndUnknownRecordsAreRefused) {
  const atrace_rec_hdr h = hdr(ATRACE_REC_FUNC_ENTRY, 1);
  RecordDecoder d;
  EXPECT_EQ(d.decode(&h, sizeof h - 1).type, Type::Invalid);
  // A kind whose struct is longer than what arrived.
  for (uint16_t kind :
       {uint16_t{ATRACE_REC_COMM}, uint16_t{ATRACE_REC_THREAD_EXIT},
        uint16_t{ATRACE_REC_SWITCH_OUT}, uint16_t{ATRACE_REC_EXEC}, uint16_t{ATRACE_REC_USDT},
        uint16_t{ATRACE_REC_UNWIND}, uint16_t{ATRACE_REC_GAP}}) {
    const atrace_rec_hdr k = hdr(kind);
    EXPECT_EQ(d.decode(&k, sizeof k).type, Type::Invalid) << kind;
  }
  // Kinds no program writes.
  for (uint16_t kind : {uint16_t{0}, uint16_t{4}, uint16_t{15}, uint16_t{27}, uint16_t{63}}) {
    atrace_rec_args a{};
    a.hdr = hdr(kind);
    EXPECT_EQ(decode(a).type, Type::Invalid) << kind;
  }
}

// --args/--retval: a values record (written after its event, stamped
// alike) is typed by the spec and joined to the held event with the same
// thread, time stamp, kind and function; never to another call's.
TEST(RecordDecoder, ValuesJoinTheEventTheyWereWrittenWith) {
  uprobes::FuncValues spec;
  spec.args = {{1, {4, true, false, formats::ArgFormat::Decimal}},
               {2, {8, false, true, formats::ArgFormat::Decimal}},
               {3, {8, false, false, formats::ArgFormat::Hex}}};
  spec.has_retval = true;
  spec.retval = {1, true, false, formats::ArgFormat::Decimal};
  RecordDecoder d({}, {}, {{3, spec}});
  Reorderer held;
  atrace_rec_hdr e = hdr(ATRACE_REC_FUNC_ENTRY, 3);
  DecodedRecord r = d.decode(&e, sizeof e);
  ASSERT_EQ(r.type, Type::Event);
  held.push(std::move(r.event));
  atrace_rec_hdr later = e;  // the next call of the same thread and function
  later.ts += 10;
  held.push(d.decode(&later, sizeof later).event);

  atrace_rec_values_str v{};
  v.v.hdr = hdr(ATRACE_REC_FUNC_VALUES, 3);
  v.v.of_kind = ATRACE_REC_FUNC_ENTRY;
  v.v.regs[0] = 0xdeadbeeffffffffeull;  // upper bits undefined for an int: -2
  v.v.regs[1] = 0x1000;
  v.v.regs[2] = 0xabc;
  v.v.nstr = 1;
  v.v.str_state[0] = ATRACE_STR_CUT;
  std::memcpy(v.str[0], "abc", 4);
  r = d.decode(&v, sizeof v);
  ASSERT_EQ(r.type, Type::Values);  // not an event of its own
  ASSERT_TRUE(join_values(held, std::move(r.event)));
  auto out = held.take_all();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(out[1].args.empty());  // the later call got nothing of it
  const auto& args = out[0].args;
  ASSERT_EQ(args.size(), 3u);
  EXPECT_EQ(args[0].slot, 1);
  EXPECT_EQ(args[0].svalue(), -2);
  EXPECT_TRUE(args[1].is_string);
  EXPECT_EQ(args[1].str, "abc");
  EXPECT_EQ(args[1].str_state, formats::StrState::Cut);
  EXPECT_EQ(args[1].value, 0x1000u);
  EXPECT_EQ(args[2].format, formats::ArgFormat::Hex);
  EXPECT_EQ(args[2].value, 0xabcu);

  // An exit's values: only into that exit; one whose event is not held
  // (not recorded, already written) joins nothing.
  atrace_rec_hdr exit = hdr(ATRACE_REC_FUNC_EXIT, 3);
  atrace_rec_hdr other = hdr(ATRACE_REC_FUNC_EXIT, 4);
  held.push(d.decode(&other, sizeof other).event);
  atrace_rec_values x{};
  x.hdr = hdr(ATRACE_REC_FUNC_VALUES, 3);
  x.of_kind = ATRACE_REC_FUNC_EXIT;
  x.regs[0] = 0x1ff;  // i8: -1
  r = d.decode(&x, sizeof x);
  ASSERT_EQ(r.type, Type::Values);
  EXPECT_FALSE(join_values(held, formats::Event(r.event)));
  held.push(d.decode(&exit, sizeof exit).event);
  ASSERT_TRUE(join_values(held, std::move(r.event)));
  out = held.take_all();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(out[0].args.empty());  // function 4's exit
  ASSERT_EQ(out[1].args.size(), 1u);
  EXPECT_EQ(out[1].args[0].slot, formats::kArgRetval);
  EXPECT_EQ(out[1].args[0].svalue(), -1);

  // A function without a spec: nothing.
  x.hdr.id = 5;
  EXPECT_EQ(d.decode(&x, sizeof x).type, Type::Invalid);
}

}  // namespace
}  // namespace atrace
