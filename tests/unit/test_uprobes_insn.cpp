// Entry-instruction classification: which kernel path a uprobe takes.
#include <gtest/gtest.h>

#include <vector>

#include "uprobes/insn_class.h"

using atrace::formats::ProbePath;
using atrace::uprobes::classify_entry;

namespace {
ProbePath classify(std::vector<uint8_t> code) { return classify_entry(code.data(), code.size()); }
}  // namespace

TEST(UprobesInsn, CanonicalNop5) {
  EXPECT_EQ(classify({0x0f, 0x1f, 0x44, 0x00, 0x00}), ProbePath::Nop5);
  EXPECT_EQ(classify({0x0f, 0x1f, 0x44, 0x00, 0x00, 0x55, 0x48}), ProbePath::Nop5);
  // Other 5-byte forms are ordinary multi-byte NOPs.
  EXPECT_EQ(classify({0x0f, 0x1f, 0x44, 0x00, 0x01}), ProbePath::Emulated);
  // Truncated: not enough bytes to be the NOP5.
  EXPECT_EQ(classify({0x0f, 0x1f, 0x44, 0x00}), ProbePath::Emulated);
}

TEST(UprobesInsn, Nops) {
  EXPECT_EQ(classify({0x90}), ProbePath::Emulated);
  EXPECT_EQ(classify({0x66, 0x90}), ProbePath::Emulated);
  EXPECT_EQ(classify({0x0f, 0x1f, 0x00}), ProbePath::Emulated);
  EXPECT_EQ(classify({0x0f, 0x1f, 0x40, 0x00}), ProbePath::Emulated);
  EXPECT_EQ(classify({0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00}), ProbePath::Emulated);
  EXPECT_EQ(classify({0x0f, 0x1f, 0x80, 0, 0, 0, 0}), ProbePath::Emulated);
  // The CS-prefixed padding NOP: the kernel refuses the CS prefix (a uprobe
  // on it attached under bpftrace here and never fired).
  EXPECT_EQ(classify({0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0}), ProbePath::Refused);
  // 0f 1f with a non-zero reg field is not a NOP.
  EXPECT_EQ(classify({0x0f, 0x1f, 0x48, 0x00}), ProbePath::SingleStep);
  // pause (f3 90) is not a plain NOP.
  EXPECT_EQ(classify({0xf3, 0x90}), ProbePath::SingleStep);
}

TEST(UprobesInsn, RefusedByTheKernel) {
  EXPECT_EQ(classify({0xf0, 0x0f, 0xb1, 0x17}), ProbePath::Refused);        // lock cmpxchg
  EXPECT_EQ(classify({0x66, 0xf0, 0x0f, 0xc1, 0x07}), ProbePath::Refused);  // 66 lock xadd
  EXPECT_EQ(classify({0x3e, 0xff, 0xe0}), ProbePath::Refused);              // notrack jmp *%rax
  EXPECT_EQ(classify({0xcc}), ProbePath::Refused);                          // int3
  EXPECT_EQ(classify({0xf4}), ProbePath::Refused);                          // hlt
  EXPECT_EQ(classify({0x0f, 0x05}), ProbePath::Refused);                    // syscall
  EXPECT_EQ(classify({0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0, 0, 0}),
            ProbePath::SingleStep);  // mov %fs:
}

TEST(UprobesInsn, PushCallJmpJcc) {
  EXPECT_EQ(classify({0x55}), ProbePath::Emulated);                    // push %rbp
  EXPECT_EQ(classify({0x53}), ProbePath::Emulated);                    // push %rbx
  EXPECT_EQ(classify({0x41, 0x57}), ProbePath::Emulated);              // push %r15
  EXPECT_EQ(classify({0x41, 0x54}), ProbePath::Emulated);              // push %r12
  EXPECT_EQ(classify({0xe8, 1, 2, 3, 4}), ProbePath::Emulated);        // call rel32
  EXPECT_EQ(classify({0xe9, 1, 2, 3, 4}), ProbePath::Emulated);        // jmp rel32
  EXPECT_EQ(classify({0xeb, 0x10}), ProbePath::Emulated);              // jmp rel8
  EXPECT_EQ(classify({0x74, 0x10}), ProbePath::Emulated);              // je rel8
  EXPECT_EQ(classify({0x0f, 0x85, 1, 2, 3, 4}), ProbePath::Emulated);  // jne rel32
}

TEST(UprobesInsn, SingleStepped) {
  EXPECT_EQ(classify({0xf3, 0x0f, 0x1e, 0xfa}), ProbePath::SingleStep);  // endbr64
  EXPECT_EQ(classify({0x48, 0x89, 0xe5}), ProbePath::SingleStep);        // mov %rsp,%rbp
  EXPECT_EQ(classify({0x48, 0x83, 0xec, 0x08}), ProbePath::SingleStep);  // sub $8,%rsp
  EXPECT_EQ(classify({0x31, 0xc0}), ProbePath::SingleStep);              // xor %eax,%eax
  EXPECT_EQ(classify({0xc3}), ProbePath::SingleStep);                    // ret
  EXPECT_EQ(classify({0x41, 0x58 + 0x10}), ProbePath::SingleStep);       // not a push
  EXPECT_EQ(classify({0x41}), ProbePath::SingleStep);                    // truncated prefix
}

TEST(UprobesInsn, NoBytes) {
  EXPECT_EQ(classify_entry(nullptr, 0), ProbePath::Unknown);
  uint8_t b = 0x55;
  EXPECT_EQ(classify_entry(&b, 0), ProbePath::Unknown);
}

// EVEX first instructions are run wrongly out of line by the kernel
// (kernel-notes/evex-single-step.md): never probed.
TEST(UprobesInsn, EvexIsNotProbed) {
  EXPECT_EQ(classify({0x62, 0xe2, 0x7d, 0x28, 0x7a, 0xce}),
            ProbePath::Refused);  // vpbroadcastb %esi,%ymm17
  EXPECT_EQ(classify({0x62, 0xe2, 0x7d, 0x48, 0x7a, 0xc6}),
            ProbePath::Refused);  // vpbroadcastb %esi,%zmm16
}
