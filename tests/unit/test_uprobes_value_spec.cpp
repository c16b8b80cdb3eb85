// --args / --retval specs (uprobes/value_spec.h): every type, the register
// range, and one clear message for each kind of mistake.
#include <gtest/gtest.h>

#include "uprobes/value_spec.h"

using namespace atrace::uprobes;
using atrace::formats::ArgFormat;

TEST(ValueSpec, TypesOfEveryWidthSignAndFormat) {
  struct Case {
    const char* text;
    uint8_t size;
    bool is_signed, is_string;
    ArgFormat format;
  } cases[] = {
      {"i8", 1, true, false, ArgFormat::Decimal},   {"i16", 2, true, false, ArgFormat::Decimal},
      {"i32", 4, true, false, ArgFormat::Decimal},  {"i64", 8, true, false, ArgFormat::Decimal},
      {"i", 8, true, false, ArgFormat::Decimal},    {"u8", 1, false, false, ArgFormat::Decimal},
      {"u64", 8, false, false, ArgFormat::Decimal}, {"u", 8, false, false, ArgFormat::Decimal},
      {"x32", 4, false, false, ArgFormat::Hex},     {"x", 8, false, false, ArgFormat::Hex},
      {"p", 8, false, false, ArgFormat::Pointer},   {"s", 8, false, true, ArgFormat::Decimal},
  };
  for (const auto& c : cases) {
    ValueType t = parse_value_type(c.text, "t");
    EXPECT_EQ(t.size, c.size) << c.text;
    EXPECT_EQ(t.is_signed, c.is_signed) << c.text;
    EXPECT_EQ(t.is_string, c.is_string) << c.text;
    EXPECT_EQ(t.format, c.format) << c.text;
  }
  for (const char* bad : {"", "i7", "f32", "q", "s8", "i128"})
    EXPECT_THROW(parse_value_type(bad, "t"), ValueSpecError) << bad;
}

TEST(ValueSpec, ArgRules) {
  auto rules = parse_arg_rules(" parse@arg1/s, arg2/i32 ; libz.so*:deflate*,inflate@arg6 ");
  ASSERT_EQ(rules.size(), 2u);
  ASSERT_EQ(rules[0].args.size(), 2u);
  EXPECT_EQ(rules[0].args[0].slot, 1);
  EXPECT_TRUE(rules[0].args[0].type.is_string);
  EXPECT_EQ(rules[0].args[1].slot, 2);
  EXPECT_EQ(rules[0].args[1].type.size, 4);
  EXPECT_EQ(rules[1].selectors.size(), 2u);
  EXPECT_EQ(rules[1].selectors[0].module_glob, "libz.so*");
  ASSERT_EQ(rules[1].args.size(), 1u);
  EXPECT_EQ(rules[1].args[0].slot, 6);
  EXPECT_EQ(rules[1].args[0].type.size, 8);  // default i64
  EXPECT_TRUE(rules[1].args[0].type.is_signed);
}

TEST(ValueSpec, RetvalRulesTellTypesFromModulePaths) {
  auto rules = parse_retval_rules("parse/i32;/usr/lib/libz.so.1:deflate;name_of/s;f");
  ASSERT_EQ(rules.size(), 4u);
  EXPECT_EQ(rules[0].retval.size, 4);
  EXPECT_EQ(rules[1].selectors.at(0).module_glob, "/usr/lib/libz.so.1");
  EXPECT_EQ(rules[1].retval.size, 8);
  EXPECT_TRUE(rules[2].retval.is_string);
  EXPECT_TRUE(rules[3].has_retval);
}

TEST(ValueSpec, MistakesSayWhat) {
  auto message = [](auto fn) -> std::string {
    try {
      fn();
    } catch (const ValueSpecError& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_NE(message([] { parse_arg_rules("f@arg7"); }).find("'arg7' is not an argument register"),
            std::string::npos);
  EXPECT_NE(message([] { parse_arg_rules("f@arg0"); }).find("not an argument register"),
            std::string::npos);
  EXPECT_NE(message([] { parse_arg_rules("f"); }).find("is not SELECTOR@ARG"), std::string::npos);
  EXPECT_NE(message([] { parse_arg_rules("@arg1"); }).find("has no function selector"),
            std::string::npos);
  EXPECT_NE(message([] { parse_arg_rules("f@arg1,arg1"); }).find("names arg1 twice"),
            std::string::npos);
  EXPECT_NE(
      message([] { parse_arg_rules("f@arg1/s,arg2/s,arg3/s"); }).find("at most 2 string arguments"),
      std::string::npos);
  EXPECT_NE(message([] { parse_arg_rules("f@arg1/q"); }).find("unknown type 'q'"),
            std::string::npos);
  // Floating point: refused for what it is (XMM registers), not as a typo.
  for (const char* fp : {"f@arg1/d", "f@arg1/f", "f@arg1/f32", "f@arg1/f64"})
    EXPECT_NE(message([fp] {
                parse_arg_rules(fp);
              }).find("cannot be recorded: they travel in XMM registers"),
              std::string::npos)
        << fp;
  EXPECT_NE(message([] { parse_retval_rules("f/d"); }).find("XMM registers"), std::string::npos);
  EXPECT_NE(message([] { parse_retval_rules("f/w"); }).find("unknown type 'w'"), std::string::npos);
}
