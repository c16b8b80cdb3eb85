// record --stack: a stack record is the `stack` of the entry it was written
// with, with the return address at [rsp] in second place when the kernel's
// frame-pointer walk lacks it, and never more frames than the walk gave.
#include <gtest/gtest.h>

#include "bpf/atrace.h"
#include "record/record_decoder.h"
#include "record/reorder.h"
#include "record/stack_joiner.h"

namespace atrace {
namespace {

using Type = DecodedRecord::Type;

atrace_rec_hdr hdr(uint16_t kind, uint32_t id, uint32_t tid = 4243) {
  atrace_rec_hdr h{};
  h.ts = 1000;
  h.tgid = 4242;
  h.tid = tid;
  h.id = id;
  h.kind = kind;
  return h;
}

atrace_rec_stack stack_rec(uint32_t id, std::vector<uint64_t> ips, uint64_t ret,
                           uint32_t tid = 4243) {
  atrace_rec_stack r{};
  r.hdr = hdr(ATRACE_REC_FUNC_STACK, id, tid);
  r.ret_addr = ret;
  r.nframes = static_cast<uint32_t>(ips.size());
  for (size_t i = 0; i < ips.size(); i++) r.ips[i] = ips[i];
  return r;
}

TEST(StackJoiner, ReturnAddressGoesSecondWhenTheWalkLacksIt) {
  // The walk from rbp at +0 skips the caller: 0x30 (caller) goes back in,
  // and the walk's last frame goes, to keep its depth.
  auto r = stack_rec(1, {0x10, 0x50, 0x60}, 0x30);
  EXPECT_EQ(stack_frames(&r, sizeof r), (std::vector<uint64_t>{0x10, 0x30, 0x50}));
  // A kernel that added it already (6.11+): unchanged.
  r = stack_rec(1, {0x10, 0x30, 0x50}, 0x30);
  EXPECT_EQ(stack_frames(&r, sizeof r), (std::vector<uint64_t>{0x10, 0x30, 0x50}));
  // A walk of one frame (depth 1) stays one frame; of none, none.
  r = stack_rec(1, {0x10}, 0x30);
  EXPECT_EQ(stack_frames(&r, sizeof r), (std::vector<uint64_t>{0x10}));
  r = stack_rec(1, {}, 0x30);
  EXPECT_TRUE(stack_frames(&r, sizeof r).empty());
  // A count beyond the record is bounded by the record.
  r = stack_rec(1, {0x10, 0x30}, 0);
  r.nframes = 1000;
  EXPECT_EQ(stack_frames(&r, sizeof r).size(), size_t{ATRACE_STACK_SMALL});
}

// The decoder makes a stack record the key of its entry (not an event of
// its own); the join finds that entry among the held events by thread,
// time stamp and function, and nothing else.
TEST(StackJoiner, JoinsTheEntryItWasWrittenWith) {
  RecordDecoder d;
  Reorderer held;
  atrace_rec_hdr e = hdr(ATRACE_REC_FUNC_ENTRY, 3);
  DecodedRecord entry = d.decode(&e, sizeof e);
  ASSERT_EQ(entry.type, Type::Event);
  held.push(std::move(entry.event));
  atrace_rec_hdr other = hdr(ATRACE_REC_FUNC_ENTRY, 4);
  held.push(d.decode(&other, sizeof other).event);

  auto s = stack_rec(3, {0x10, 0x30, 0x50}, 0x30);
  DecodedRecord r = d.decode(&s, sizeof s);
  ASSERT_EQ(r.type, Type::Stack);
  EXPECT_EQ(r.event.kind, formats::EventKind::FuncEntry);
  EXPECT_EQ(r.event.id, 3u);
  ASSERT_TRUE(join_stack(held, std::move(r.event)));
  auto events = held.take_until(UINT64_MAX);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].id, 3u);
  EXPECT_EQ(events[0].stack, (std::vector<uint64_t>{0x10, 0x30, 0x50}));
  EXPECT_TRUE(events[1].stack.empty());

  // No entry of its thread, function and time held: not joined.
  held.push(d.decode(&e, sizeof e).event);
  for (auto rec : {stack_rec(3, {0x10}, 0, 99), stack_rec(5, {0x10}, 0)}) {
    DecodedRecord k = d.decode(&rec, sizeof rec);
    ASSERT_EQ(k.type, Type::Stack);
    EXPECT_FALSE(join_stack(held, std::move(k.event)));
  }
  // The large record decodes alike; one shorter than the smaller record is
  // refused.
  atrace_rec_stack_big big{};
  big.hdr = hdr(ATRACE_REC_FUNC_STACK, 3);
  big.nframes = ATRACE_STACK_MAX;
  for (auto& ip : big.ips) ip = 0x77;
  EXPECT_EQ(d.decode(&big, sizeof big).event.stack.size(), size_t{ATRACE_STACK_MAX});
  EXPECT_EQ(d.decode(&s, sizeof(atrace_rec_hdr) + 8).type, Type::Invalid);
}

}  // namespace
}  // namespace atrace
