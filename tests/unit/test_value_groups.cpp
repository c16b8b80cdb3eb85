// report --group-by (analysis/value_groups.h) and the exporters' spelling
// of recorded values (output/arg_text.h), on hand-built events: the values
// a call's entry and exit carry reach the grouper, grouped by value with
// exact calls and totals; unfinished calls and calls without the value
// count nowhere.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/analysis.h"
#include "output/arg_text.h"

using namespace atrace;
using formats::EventKind;

namespace {

formats::ProbeArg int_arg(uint8_t slot, int64_t v) {
  formats::ProbeArg a;
  a.slot = slot;
  a.size = 4;
  a.is_signed = true;
  a.value = static_cast<uint64_t>(v);
  return a;
}

formats::ProbeArg str_arg(uint8_t slot, const std::string& s, uint64_t addr) {
  formats::ProbeArg a;
  a.slot = slot;
  a.is_string = true;
  a.size = 0;
  a.str = s;
  a.value = addr;
  return a;
}

formats::Event ev(uint64_t ts, EventKind k, uint32_t id, std::vector<formats::ProbeArg> args = {}) {
  formats::Event e;
  e.ts = ts;
  e.pid = e.tid = 100;
  e.id = id;
  e.kind = k;
  e.args = std::move(args);
  return e;
}

std::vector<formats::ProbeInfo> probes() {
  std::vector<formats::ProbeInfo> out(2);
  out[0].id = 1;
  out[0].name = "f";
  out[1].id = 2;
  out[1].name = "g";
  return out;
}

TEST(ValueGroups, ParsesTheKeysItNames) {
  EXPECT_EQ(analysis::parse_group_key("arg1"), 1);
  EXPECT_EQ(analysis::parse_group_key("arg6"), 6);
  EXPECT_EQ(analysis::parse_group_key("retval"), formats::kArgRetval);
  for (const char* bad : {"arg0", "arg7", "args", "ret", "", "arg10"})
    EXPECT_FALSE(analysis::parse_group_key(bad)) << bad;
  EXPECT_EQ(analysis::slot_name(3), "arg3");
  EXPECT_EQ(analysis::slot_name(formats::kArgRetval), "retval");
}

TEST(ValueGroups, CallsByArgumentAndByReturnValue) {
  analysis::CallReplay replay(probes());
  analysis::ValueGrouper by_arg(replay, 1), by_ret(replay, formats::kArgRetval);
  // f(5) 10 ns = 1, f(5) 30 ns = 1, f(-7) 100 ns = 2; g("a") twice at two
  // addresses, 4 + 6 ns; g without values; f(9) never returns.
  replay.add(ev(0, EventKind::FuncEntry, 1, {int_arg(1, 5)}));
  replay.add(ev(10, EventKind::FuncExit, 1, {int_arg(formats::kArgRetval, 1)}));
  replay.add(ev(20, EventKind::FuncEntry, 1, {int_arg(1, 5)}));
  replay.add(ev(50, EventKind::FuncExit, 1, {int_arg(formats::kArgRetval, 1)}));
  replay.add(ev(60, EventKind::FuncEntry, 1, {int_arg(1, -7)}));
  replay.add(ev(160, EventKind::FuncExit, 1, {int_arg(formats::kArgRetval, 2)}));
  replay.add(ev(200, EventKind::FuncEntry, 2, {str_arg(1, "a", 0x1000)}));
  replay.add(ev(204, EventKind::FuncExit, 2));
  replay.add(ev(210, EventKind::FuncEntry, 2, {str_arg(1, "a", 0x2000)}));
  replay.add(ev(216, EventKind::FuncExit, 2));
  replay.add(ev(220, EventKind::FuncEntry, 2));
  replay.add(ev(230, EventKind::FuncExit, 2));
  replay.add(ev(300, EventKind::FuncEntry, 1, {int_arg(1, 9)}));
  replay.finish(400);

  analysis::ValueGroups a = by_arg.result();
  ASSERT_EQ(a.functions.size(), 2u);
  EXPECT_EQ(a.functions[0].id, 1u);  // 140 ns before g's 10
  ASSERT_EQ(a.functions[0].groups.size(), 2u) << "f(9) is unfinished: not counted";
  EXPECT_EQ(a.functions[0].groups[0].value.svalue(), -7);
  EXPECT_EQ(a.functions[0].groups[0].calls, 1u);
  EXPECT_EQ(a.functions[0].groups[0].total_ns, 100u);
  EXPECT_EQ(a.functions[0].groups[1].value.svalue(), 5);
  EXPECT_EQ(a.functions[0].groups[1].calls, 2u);
  EXPECT_EQ(a.functions[0].groups[1].total_ns, 40u);
  ASSERT_EQ(a.functions[1].groups.size(), 1u) << "one text at two addresses is one value";
  EXPECT_EQ(a.functions[1].groups[0].calls, 2u);
  EXPECT_EQ(a.functions[1].groups[0].total_ns, 10u);

  analysis::ValueGroups r = by_ret.result();
  ASSERT_EQ(r.functions.size(), 1u) << "g recorded no return value";
  ASSERT_EQ(r.functions[0].groups.size(), 2u);
  EXPECT_EQ(r.functions[0].groups[0].value.svalue(), 2);
  EXPECT_EQ(r.functions[0].groups[0].total_ns, 100u);
  EXPECT_EQ(r.functions[0].groups[1].value.svalue(), 1);
  EXPECT_EQ(r.functions[0].groups[1].calls, 2u);
}

TEST(ValueGroups, ExporterArgsSpellEachKind) {
  formats::ProbeArg hex = int_arg(2, -1);
  hex.format = formats::ArgFormat::Hex;
  formats::ProbeArg u;
  u.slot = 3;
  u.size = 8;
  u.value = UINT64_MAX;
  formats::ProbeArg null_str = str_arg(4, "", 0);
  null_str.str_state = formats::StrState::Null;
  formats::ProbeArg cut = str_arg(5, "abc", 0x10);
  cut.str_state = formats::StrState::Cut;
  std::vector<analysis::InstantArg> out;
  analysis::append_value_args(
      out, {int_arg(1, -7), hex, u, null_str, cut, str_arg(formats::kArgRetval, "x\"y", 0x20)});
  ASSERT_EQ(out.size(), 6u);
  using T = analysis::InstantArg::Type;
  EXPECT_EQ(out[0].key, "arg1");
  EXPECT_EQ(out[0].type, T::Int);
  EXPECT_EQ(static_cast<int64_t>(out[0].value), -7);
  EXPECT_EQ(out[1].type, T::Hex);
  EXPECT_EQ(out[1].value, 0xffffffffu) << "the 32 bits the type keeps";
  EXPECT_EQ(out[2].type, T::Uint);
  EXPECT_EQ(out[2].value, UINT64_MAX);
  EXPECT_EQ(out[3].text, "NULL");
  EXPECT_EQ(out[4].text, "\"abc\"...");
  EXPECT_EQ(out[5].key, "retval");
  EXPECT_EQ(out[5].text, "x\"y") << "a whole string: its text, unquoted";
  EXPECT_EQ(analysis::values_text({int_arg(1, -7), str_arg(formats::kArgRetval, "x\"y", 0)}),
            "arg1=-7 retval=\"x\\\"y\"");
}

}  // namespace
