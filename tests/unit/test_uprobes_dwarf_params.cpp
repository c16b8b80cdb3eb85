// --args=FUNC@auto's parameters from debug information (uprobes/
// dwarf_params.h), on a function of this test binary: this file is built
// with full debug information (tests/unit/CMakeLists.txt), whatever the
// build type.
#include <gtest/gtest.h>

#include "uprobes/dwarf_params.h"
#include "uprobes/elf_symbols.h"
#include "uprobes/value_spec.h"

using namespace atrace;
using namespace atrace::uprobes;

struct Big {
  long a[4];
};

extern "C" __attribute__((noipa, used)) long dwp_probe(int count, const char* name,
                                                       unsigned short small, double ratio,
                                                       void* where, signed char c) {
  return count + (name ? 1 : 0) + small + static_cast<long>(ratio) + (where ? 1 : 0) + c;
}

// A struct returned in memory: its address takes rdi.
extern "C" __attribute__((noipa, used)) Big dwp_big(long n, const char* s) {
  Big b{};
  b.a[0] = n + (s ? 1 : 0);
  return b;
}

namespace {

uint64_t address_of(const std::string& exe, const std::string& name) {
  for (const auto& f : read_functions(exe))
    if (f.mangled == name) return f.address;
  return 0;
}

}  // namespace

TEST(DwarfParams, IntegerClassParametersInTheirRegisters) {
  const std::string exe = "/proc/self/exe";
  uint64_t addr = address_of(exe, "dwp_probe");
  ASSERT_NE(addr, 0u);
  auto p = dwarf_params(exe, "", addr);
  ASSERT_TRUE(p);
  ASSERT_EQ(p->args.size(), 5u);
  auto expect = [&](size_t i, const char* name, uint8_t slot, uint8_t size, bool is_signed,
                    bool is_string, formats::ArgFormat f) {
    const ArgSpec& a = p->args[i];
    EXPECT_EQ(a.name, name) << i;
    EXPECT_EQ(a.slot, slot) << name;
    EXPECT_EQ(a.type.is_string, is_string) << name;
    EXPECT_EQ(a.type.format, f) << name;
    if (!is_string) {
      EXPECT_EQ(a.type.size, size) << name;
      EXPECT_EQ(a.type.is_signed, is_signed) << name;
    }
  };
  using F = formats::ArgFormat;
  expect(0, "count", 1, 4, true, false, F::Decimal);
  expect(1, "name", 2, 8, false, true, F::Decimal);
  expect(2, "small", 3, 2, false, false, F::Decimal);
  expect(3, "where", 4, 8, false, false, F::Pointer);  // ratio is in xmm0: not a slot
  expect(4, "c", 5, 1, true, false, F::Decimal);
  ASSERT_EQ(p->notes.size(), 1u);
  EXPECT_EQ(p->notes[0], "ratio (double): in an XMM register; left out");
}

TEST(DwarfParams, StructReturnedInMemoryTakesTheFirstRegister) {
  const std::string exe = "/proc/self/exe";
  uint64_t addr = address_of(exe, "dwp_big");
  ASSERT_NE(addr, 0u);
  auto p = dwarf_params(exe, "", addr);
  ASSERT_TRUE(p);
  ASSERT_EQ(p->args.size(), 2u);
  EXPECT_EQ(p->args[0].name, "n");
  EXPECT_EQ(p->args[0].slot, 2);
  EXPECT_EQ(p->args[1].name, "s");
  EXPECT_EQ(p->args[1].slot, 3);
  EXPECT_TRUE(p->args[1].type.is_string);
}

TEST(DwarfParams, NothingWhereNoDebugInformationDescribesIt) {
  EXPECT_FALSE(dwarf_params("/proc/self/exe", "", 1));
  EXPECT_FALSE(dwarf_params("/nonexistent/file", "", 0x1000));
}

TEST(DwarfParams, AutoSpecParses) {
  auto rules = parse_arg_rules("parse,lookup@auto; f@arg1");
  ASSERT_EQ(rules.size(), 2u);
  EXPECT_TRUE(rules[0].auto_args);
  EXPECT_EQ(rules[0].selectors.size(), 2u);
  EXPECT_TRUE(rules[0].args.empty());
  EXPECT_FALSE(rules[1].auto_args);
}
