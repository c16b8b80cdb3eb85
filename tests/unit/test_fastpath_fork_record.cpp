// The programs' fork record (bpf/atrace.h's atrace_rec_fork) carries the
// child's thread pointer to the PROC_FORK event; a record of the older,
// shorter layout decodes with none.
#include <gtest/gtest.h>

#include "bpf/atrace.h"
#include "record/record_decoder.h"

namespace atrace {
namespace {

TEST(FastPathForkRecord, DecodesTheChildsThreadPointer) {
  atrace_rec_fork f{};
  f.a.hdr.ts = 1000;
  f.a.hdr.tgid = 4242;
  f.a.hdr.tid = 4242;
  f.a.hdr.id = 1;  // a thread
  f.a.hdr.kind = ATRACE_REC_FORK;
  f.a.arg0 = 4242;
  f.a.arg1 = 4250;
  f.thread_pointer = 0x7f38773616c0;
  RecordDecoder d;
  DecodedRecord r = d.decode(&f, sizeof f);
  ASSERT_EQ(r.type, DecodedRecord::Type::Event);
  EXPECT_EQ(r.event.kind, formats::EventKind::ProcFork);
  EXPECT_EQ(r.event.flags, formats::kForkThread);
  EXPECT_EQ(r.event.arg0, 4242u);
  EXPECT_EQ(r.event.arg1, 4250u);
  EXPECT_EQ(formats::fork_thread_pointer(r.event), 0x7f38773616c0u);

  r = d.decode(&f.a, sizeof f.a);  // without the pointer
  ASSERT_EQ(r.type, DecodedRecord::Type::Event);
  EXPECT_EQ(r.event.arg1, 4250u);
  EXPECT_EQ(formats::fork_thread_pointer(r.event), 0u);
}

}  // namespace
}  // namespace atrace
