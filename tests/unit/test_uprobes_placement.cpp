// Entry-probe placement (uprobes/placement.h): which instruction of a
// function's prefix the probe goes on, from the function's bytes.
#include <gtest/gtest.h>

#include <vector>

#include "uprobes/placement.h"

using atrace::formats::ProbePath;
using atrace::uprobes::EntryPlacement;
using atrace::uprobes::place_entry;

namespace {

constexpr uint64_t kOffset = 0x1140;  // a file offset well inside a page

EntryPlacement place(const std::vector<uint8_t>& code, bool nop5 = true,
                     uint64_t offset = kOffset) {
  return place_entry(code.data(), code.size(), offset, nop5);
}

void expect(const EntryPlacement& p, uint64_t delta, ProbePath path) {
  EXPECT_EQ(p.delta, delta);
  EXPECT_EQ(p.path, path) << atrace::formats::to_string(p.path);
}

// Encodings used below.
#define ENDBR64 0xf3, 0x0f, 0x1e, 0xfa
#define PUSH_RBP 0x55
#define PUSH_RBX 0x53
#define POP_RBX 0x5b
#define POP_RBP 0x5d
#define MOV_RSP_RBP 0x48, 0x89, 0xe5
#define MOV_RDI_RAX 0x48, 0x89, 0xf8
#define XOR_EAX 0x31, 0xc0
#define NOP5 0x0f, 0x1f, 0x44, 0x00, 0x00
#define RET 0xc3

}  // namespace

TEST(UprobesPlacement, PushAfterEndbr64) {
  expect(place({ENDBR64, PUSH_RBP, MOV_RSP_RBP, POP_RBP, RET}), 4, ProbePath::Emulated);
}

TEST(UprobesPlacement, CheapFirstInstructionStays) {
  expect(place({PUSH_RBP, MOV_RSP_RBP, POP_RBP, RET}), 0, ProbePath::Emulated);
  expect(place({NOP5, PUSH_RBP, POP_RBP, RET}), 0, ProbePath::Nop5);
}

TEST(UprobesPlacement, Nop5AfterAMov) {
  expect(place({MOV_RDI_RAX, NOP5, RET}), 3, ProbePath::Nop5);
  // Without optimized uprobes the NOP is emulated: still cheaper than +0.
  expect(place({MOV_RDI_RAX, NOP5, RET}, false), 3, ProbePath::Emulated);
  // A NOP5 across a page is not optimized.
  expect(place({MOV_RDI_RAX, NOP5, RET}, true, 4096 - 5), 3, ProbePath::Emulated);
}

TEST(UprobesPlacement, NopThenNop5TakesTheNop5) {
  // 0x90 is emulated, but the NOP5 after it is cheaper still.
  expect(place({MOV_RDI_RAX, 0x90, NOP5, RET}), 4, ProbePath::Nop5);
}

TEST(UprobesPlacement, PrefixEndsAtTheStackPointer) {
  // sub $8,%rsp: nothing after it is considered.
  expect(place({ENDBR64, 0x48, 0x83, 0xec, 0x08, PUSH_RBX, POP_RBX, 0x48, 0x83, 0xc4, 0x08, RET}),
         0, ProbePath::SingleStep);
  // A red-zone store (mov %rdi,-8(%rsp)) touches the stack pointer too.
  expect(place({0x48, 0x89, 0x7c, 0x24, 0xf8, PUSH_RBX, POP_RBX, RET}), 0, ProbePath::SingleStep);
  // mov %rsp,%rbp reads it.
  expect(place({MOV_RSP_RBP, PUSH_RBX, POP_RBX, RET}), 0, ProbePath::SingleStep);
}

TEST(UprobesPlacement, PrefixEndsAtABranch) {
  // jne after a mov: the branch itself is emulated and still sees the
  // return address at [rsp]; nothing after it is considered.
  expect(place({MOV_RDI_RAX, 0x75, 0x01, RET, PUSH_RBX, POP_RBX, RET}), 3, ProbePath::Emulated);
  // A syscall ends the prefix (and is no candidate).
  expect(place({MOV_RDI_RAX, 0x0f, 0x05, PUSH_RBX, POP_RBX, RET}), 0, ProbePath::SingleStep);
}

TEST(UprobesPlacement, LoopBackToTheProbeKeepsEntry) {
  // endbr64; xor; 1: push %rbx; pop %rbx; dec %rdi; jnz 1b; ret
  expect(place({ENDBR64, XOR_EAX, PUSH_RBX, POP_RBX, 0x48, 0xff, 0xcf, 0x75, 0xf9, RET}), 0,
         ProbePath::SingleStep);
}

TEST(UprobesPlacement, LoopIntoThePrefixKeepsEntry) {
  // xor; 1: add $1,%rax; push; pop; dec %rdi; jnz 1b; ret
  expect(place({XOR_EAX, 0x48, 0x83, 0xc0, 0x01, PUSH_RBX, POP_RBX, 0x48, 0xff, 0xcf, 0x75, 0xf5,
                RET}),
         0, ProbePath::SingleStep);
}

TEST(UprobesPlacement, LoopToTheStartStillMoves) {
  // endbr64; push; pop; dec %rdi; jnz <+0>; ret: every pass meets the probe
  // once, as at +0.
  expect(place({ENDBR64, PUSH_RBX, POP_RBX, 0x48, 0xff, 0xcf, 0x75, 0xf5, RET}), 4,
         ProbePath::Emulated);
}

TEST(UprobesPlacement, IndirectJumpKeepsEntry) {
  // mov; push %rbx; jmp *%rbx; pop; ret
  expect(place({MOV_RDI_RAX, PUSH_RBX, 0xff, 0xe3, POP_RBX, RET}), 0, ProbePath::SingleStep);
  // An indirect call returns to the next instruction: no reason to stay.
  expect(place({MOV_RDI_RAX, PUSH_RBX, 0xff, 0xd0, POP_RBX, RET}), 3, ProbePath::Emulated);
}

TEST(UprobesPlacement, RipRelativeReferenceIntoThePrefixKeepsEntry) {
  // 0: mov; 3: push; 4: lea -8(%rip),%rax: the push's address
  // (a taken label is a possible jump target).
  expect(place({MOV_RDI_RAX, PUSH_RBX, 0x48, 0x8d, 0x05, 0xf8, 0xff, 0xff, 0xff, POP_RBX, RET}), 0,
         ProbePath::SingleStep);
}

TEST(UprobesPlacement, RefusedFirstInstructionCanMove) {
  // lock incq (%rdi) is refused by the kernel; the push after it is not.
  expect(place({0xf0, 0x48, 0xff, 0x07, PUSH_RBX, POP_RBX, RET}), 4, ProbePath::Emulated);
}

TEST(UprobesPlacement, OnlyTheFirstBytesKnownKeepsEntry) {
  std::vector<uint8_t> code = {ENDBR64, PUSH_RBP, MOV_RSP_RBP, POP_RBP, RET};
  expect(place_entry(code.data(), code.size(), kOffset, true, false), 0, ProbePath::SingleStep);
}

TEST(UprobesPlacement, UndecodableCodeKeepsEntry) {
  // 0x06 (push es) is invalid in 64-bit mode.
  expect(place({ENDBR64, PUSH_RBX, POP_RBX, 0x06, RET}), 0, ProbePath::SingleStep);
}

TEST(UprobesPlacement, Empty) {
  expect(place_entry(nullptr, 0, kOffset, true), 0, ProbePath::Unknown);
}
