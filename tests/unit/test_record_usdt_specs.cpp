// usdt_bpf_spec: the argument locations sys/sdt.h writes in a note become
// the spec libbpf's bpf_usdt_arg() reads, field for field as libbpf's own
// parser (usdt.c, parse_usdt_arg for x86-64) would set them; a location it
// cannot read is refused with its name, never attached half-read.
#include <asm/ptrace.h>
#include <gtest/gtest.h>

#include <cstddef>

#include "record/usdt_specs.h"

namespace atrace {
namespace {

uprobes::UsdtProbe site(const std::string& args) {
  uprobes::UsdtProbe p;
  p.provider = "app";
  p.name = "req";
  p.args = args;
  p.arg_list = uprobes::parse_usdt_args(args);
  return p;
}

TEST(UsdtSpecs, RegistersDerefsAndConstantsAsLibbpfReadsThem) {
  std::string error;
  auto spec = usdt_bpf_spec(site("-4@%edi 8@-16(%rbp) 4@$5 -1@%r9b 2@(%rax) -8@$-3"), 0x2a, &error);
  ASSERT_TRUE(spec) << error;
  EXPECT_EQ(spec->usdt_cookie, 0x2au);
  ASSERT_EQ(spec->arg_cnt, 6);
  const auto& a = spec->args;
  EXPECT_EQ(a[0].arg_type, ATRACE_USDT_ARG_REG);
  EXPECT_EQ(a[0].reg_off, static_cast<short>(offsetof(pt_regs, rdi)));
  EXPECT_EQ(a[0].arg_signed, 1);
  EXPECT_EQ(a[0].arg_bitshift, 32);
  EXPECT_EQ(a[1].arg_type, ATRACE_USDT_ARG_REG_DEREF);
  EXPECT_EQ(a[1].reg_off, static_cast<short>(offsetof(pt_regs, rbp)));
  EXPECT_EQ(a[1].val_off, static_cast<uint64_t>(-16));
  EXPECT_EQ(a[1].arg_signed, 0);
  EXPECT_EQ(a[1].arg_bitshift, 0);
  EXPECT_EQ(a[2].arg_type, ATRACE_USDT_ARG_CONST);
  EXPECT_EQ(a[2].val_off, 5u);
  EXPECT_EQ(a[2].arg_bitshift, 32);
  EXPECT_EQ(a[3].arg_type, ATRACE_USDT_ARG_REG);
  EXPECT_EQ(a[3].reg_off, static_cast<short>(offsetof(pt_regs, r9)));
  EXPECT_EQ(a[3].arg_bitshift, 56);
  EXPECT_EQ(a[4].arg_type, ATRACE_USDT_ARG_REG_DEREF);
  EXPECT_EQ(a[4].reg_off, static_cast<short>(offsetof(pt_regs, rax)));
  EXPECT_EQ(a[4].val_off, 0u);
  EXPECT_EQ(a[4].arg_bitshift, 48);
  EXPECT_EQ(a[5].val_off, static_cast<uint64_t>(-3));
  EXPECT_EQ(a[5].arg_signed, 1);
}

TEST(UsdtSpecs, NoArgumentsIsAnEmptySpec) {
  std::string error;
  auto spec = usdt_bpf_spec(site(""), 7, &error);
  ASSERT_TRUE(spec) << error;
  EXPECT_EQ(spec->arg_cnt, 0);
  EXPECT_EQ(spec->usdt_cookie, 7u);
}

TEST(UsdtSpecs, LocationsUsdtBpfCannotReadAreRefusedByName) {
  for (const char* args :
       {"8@8(%rax,%rbx,4)", "4@%xmm0", "8@counter(%rip)", "4@%nosuch", "4@$x", "8@-16(%rbp"}) {
    std::string error;
    EXPECT_FALSE(usdt_bpf_spec(site(std::string("4@%edi ") + args), 1, &error)) << args;
    EXPECT_NE(error.find("argument 2"), std::string::npos) << error;
  }
}

TEST(UsdtSpecs, MoreArgumentsThanTheSpecHoldsAreRefused) {
  std::string args;
  for (int i = 0; i < ATRACE_USDT_SPEC_ARGS + 1; i++) args += "8@%rdi ";
  std::string error;
  EXPECT_FALSE(usdt_bpf_spec(site(args), 1, &error));
  EXPECT_NE(error.find("more than 12"), std::string::npos) << error;
}

}  // namespace
}  // namespace atrace
