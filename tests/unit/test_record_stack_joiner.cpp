// record --stack: a stack record is the `stack` of its thread's next entry
// of the same function, with the return address at [rsp] in second place
// when the kernel's frame-pointer walk lacks it, and never more frames than
// the walk gave; one whose entry did not come is dropped.
#include <gtest/gtest.h>

#include "bpf/atrace.h"
#include "record/record_decoder.h"
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

TEST(StackJoiner, JoinsTheNextEntryOfItsFunctionOnly) {
  RecordDecoder d;
  auto s = stack_rec(3, {0x10, 0x30, 0x50}, 0x30);
  EXPECT_EQ(d.decode(&s, sizeof s).type, Type::Invalid);  // not an event of its own
  atrace_rec_hdr e = hdr(ATRACE_REC_FUNC_ENTRY, 3);
  DecodedRecord r = d.decode(&e, sizeof e);
  ASSERT_EQ(r.type, Type::Event);
  EXPECT_EQ(r.event.stack, (std::vector<uint64_t>{0x10, 0x30, 0x50}));
  // Used up: the next entry has none.
  r = d.decode(&e, sizeof e);
  EXPECT_TRUE(r.event.stack.empty());
  // An entry of another function (the stack's was filtered off) drops it.
  s = stack_rec(4, {0x10}, 0);
  d.decode(&s, sizeof s);
  r = d.decode(&e, sizeof e);
  EXPECT_TRUE(r.event.stack.empty());
  atrace_rec_hdr e4 = hdr(ATRACE_REC_FUNC_ENTRY, 4);
  r = d.decode(&e4, sizeof e4);
  EXPECT_TRUE(r.event.stack.empty());
  // Another thread's entry leaves it waiting; the large record works alike.
  atrace_rec_stack_big big{};
  big.hdr = hdr(ATRACE_REC_FUNC_STACK, 3, 99);
  big.nframes = ATRACE_STACK_MAX;
  for (auto& ip : big.ips) ip = 0x77;
  d.decode(&big, sizeof big);
  r = d.decode(&e, sizeof e);
  EXPECT_TRUE(r.event.stack.empty());
  atrace_rec_hdr e99 = hdr(ATRACE_REC_FUNC_ENTRY, 3, 99);
  r = d.decode(&e99, sizeof e99);
  EXPECT_EQ(r.event.stack.size(), size_t{ATRACE_STACK_MAX});
  // Shorter than the smaller record: ignored.
  d.decode(&s, sizeof(atrace_rec_hdr) + 8);
  r = d.decode(&e4, sizeof e4);
  EXPECT_TRUE(r.event.stack.empty());
}

}  // namespace
}  // namespace atrace
