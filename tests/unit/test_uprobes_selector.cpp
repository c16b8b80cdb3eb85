// Selector parsing and matching: the syntax users type on --select/--exclude.
#include <gtest/gtest.h>

#include "uprobes/selector.h"

using atrace::uprobes::parse_selectors;
using atrace::uprobes::SelectorError;

TEST(UprobesSelector, SplitsOnTopLevelCommasAndTrims) {
  auto s = parse_selectors(" main , foo*,ns::bar ");
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].pattern, "main");
  EXPECT_EQ(s[1].pattern, "foo*");
  EXPECT_EQ(s[2].pattern, "ns::bar");
  EXPECT_EQ(s[2].text, "ns::bar");
  for (const auto& sel : s) {
    EXPECT_TRUE(sel.module_glob.empty());
    EXPECT_FALSE(sel.is_regex);
  }
}

TEST(UprobesSelector, CommasInsideBracketsBelongToTheName) {
  auto s =
      parse_selectors("std::map<int, int>::at(int const&),f(int, char),a[1,2],g{x,y},re:a{1,3}");
  ASSERT_EQ(s.size(), 5u);
  EXPECT_EQ(s[0].pattern, "std::map<int, int>::at(int const&)");
  EXPECT_EQ(s[1].pattern, "f(int, char)");
  EXPECT_EQ(s[2].pattern, "a[1,2]");
  EXPECT_EQ(s[3].pattern, "g{x,y}");
  EXPECT_TRUE(s[4].is_regex);
  EXPECT_EQ(s[4].pattern, "a{1,3}");
}

TEST(UprobesSelector, OperatorNamesDoNotOpenBrackets) {
  auto s = parse_selectors("ns::operator<,foo,X::operator,,bar");
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0].pattern, "ns::operator<");
  EXPECT_EQ(s[1].pattern, "foo");
  EXPECT_EQ(s[2].pattern, "X::operator,");
  EXPECT_EQ(s[3].pattern, "bar");
}

TEST(UprobesSelector, DoubleColonIsNotAModuleSeparator) {
  auto s = parse_selectors("ns::Class::*");
  ASSERT_EQ(s.size(), 1u);
  EXPECT_TRUE(s[0].module_glob.empty());
  EXPECT_EQ(s[0].pattern, "ns::Class::*");
}

TEST(UprobesSelector, ModuleGlob) {
  auto s = parse_selectors("libz.so*:deflate*,libfoo.so:ns::f*,libfoo.so:re:^f.*,re:^a:b");
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0].module_glob, "libz.so*");
  EXPECT_EQ(s[0].pattern, "deflate*");
  EXPECT_FALSE(s[0].is_regex);
  EXPECT_EQ(s[1].module_glob, "libfoo.so");
  EXPECT_EQ(s[1].pattern, "ns::f*");
  EXPECT_EQ(s[2].module_glob, "libfoo.so");
  EXPECT_TRUE(s[2].is_regex);
  EXPECT_EQ(s[2].pattern, "^f.*");
  // A leading re: takes the rest as the regex, colons included.
  EXPECT_TRUE(s[3].module_glob.empty());
  EXPECT_TRUE(s[3].is_regex);
  EXPECT_EQ(s[3].pattern, "^a:b");
}

TEST(UprobesSelector, ModuleMatching) {
  auto s = parse_selectors("libz.so*:deflate*,/usr/lib/*/libc.so.6:malloc,main");
  EXPECT_TRUE(s[0].matches_module("libz.so.1", "/lib/x86_64-linux-gnu/libz.so.1", false));
  EXPECT_FALSE(s[0].matches_module("libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6", false));
  EXPECT_TRUE(s[1].matches_module("libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6", false));
  EXPECT_FALSE(s[1].matches_module("libc.so.6", "/opt/libc.so.6", false));
  // No module: only the main executable.
  EXPECT_TRUE(s[2].matches_module("demo", "/tmp/demo", true));
  EXPECT_FALSE(s[2].matches_module("libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6", false));
  // A module glob can name the main executable too.
  auto d = parse_selectors("demo:f");
  EXPECT_TRUE(d[0].matches_module("demo", "/tmp/demo", true));
}

TEST(UprobesSelector, GlobMatchesFullOrBaseName) {
  auto s = parse_selectors("ns::add*,ns::Class::*,main,f(int)");
  EXPECT_TRUE(s[0].matches_name("int ns::add<int>(int, int)"));
  EXPECT_TRUE(s[0].matches_name("ns::add(int, int)"));
  EXPECT_FALSE(s[0].matches_name("ns::sub(int, int)"));
  EXPECT_TRUE(s[1].matches_name("ns::Class::method(int) const"));
  EXPECT_FALSE(s[1].matches_name("ns::Other::method(int) const"));
  // Plain names match exactly, not as substrings; '*' crosses "::".
  EXPECT_TRUE(s[2].matches_name("main"));
  EXPECT_FALSE(s[2].matches_name("domain"));
  EXPECT_TRUE(s[3].matches_name("f(int)"));
  EXPECT_FALSE(s[3].matches_name("f(long)"));
  EXPECT_TRUE(parse_selectors("*::method")[0].matches_name("a::b::method()"));
}

TEST(UprobesSelector, RegexSearchesFullBaseOrShortName) {
  auto s = parse_selectors("re:^ns::add$,re:int\\)$");
  // The short name is "ns::add", the base name "ns::add<int>".
  EXPECT_TRUE(s[0].matches_name("int ns::add<int>(int, int)"));
  EXPECT_FALSE(parse_selectors("re:^ns::add<int>$")[0].matches_name("int ns::add<long>(long)"));
  EXPECT_TRUE(s[0].matches_name("ns::add(int)"));
  EXPECT_TRUE(s[1].matches_name("ns::add(int)"));
  EXPECT_FALSE(s[1].matches_name("ns::add(long)"));
  EXPECT_TRUE(parse_selectors("re:alloc")[0].matches_name("malloc"));
}

// What parse_selectors says of `list`, "no error" when it takes it.
static std::string selector_error(const std::string& list) {
  try {
    parse_selectors(list);
  } catch (const SelectorError& e) {
    return e.what();
  }
  return "no error";
}

TEST(UprobesSelector, Errors) {
  EXPECT_EQ(selector_error("re:(").rfind("bad selector 're:(': ", 0), 0u) << selector_error("re:(");
  EXPECT_GT(selector_error("re:(").size(), std::string("bad selector 're:(': ").size());
  const std::string empty =
      "bad selector '': empty selector (expected FUNC, MODULE:FUNC or re:REGEX, comma-separated)";
  EXPECT_EQ(selector_error(""), empty);
  EXPECT_EQ(selector_error("a,,b"), empty);
  EXPECT_EQ(selector_error("a, "), empty);
  EXPECT_EQ(selector_error("libc.so.6:"),
            "bad selector 'libc.so.6:': empty function pattern after ':' (expected MODULE:FUNC, "
            "e.g. libc.so.6:malloc)");
  EXPECT_EQ(selector_error(":f"),
            "bad selector ':f': empty module before ':' (expected MODULE:FUNC, e.g. "
            "libc.so.6:malloc)");
  EXPECT_EQ(selector_error("re:"),
            "bad selector 're:': empty regular expression after 're:' (expected re:REGEX, e.g. "
            "re:^parse_)");
  EXPECT_EQ(selector_error("m:re:[a").rfind("bad selector 'm:re:[a': ", 0), 0u);
  EXPECT_NE(selector_error("m:re:[a").find("(re:REGEX takes RE2's syntax)"), std::string::npos);
}

// A glob's unclosed '[' or '(' would match no name, silently: each is a
// syntax error that says what a glob or a parameter list looks like.
TEST(UprobesSelector, UnclosedBracketsInAGlobAreErrors) {
  EXPECT_EQ(selector_error("bad::["),
            "bad selector 'bad::[': '[' at 6 opens a set of characters that no ']' closes (a "
            "glob: *, ?, [abc])");
  EXPECT_EQ(selector_error("f(int"),
            "bad selector 'f(int': a '(' that no ')' closes (a parameter list: f(int))");
  EXPECT_EQ(selector_error("m:f)"),
            "bad selector 'm:f)': ')' at 4 closes no '(' (a parameter list: f(int))");
  // Operator names and balanced brackets are names, not errors.
  for (const char* ok : {"*operator[]*", "S::operator()(int)", "*operator<*", "f[ab]*",
                         "*operator new[]*", "{lambda(int)#1}*", "(anonymous namespace)::*"})
    EXPECT_EQ(selector_error(ok), "no error") << ok;
}

// std::regex recursed once per character and crashed (SIGSEGV) on a
// 30,000-character name; RE2 runs in linear time without recursion.
TEST(UprobesSelector, RegexOnAVeryLongNameDoesNotCrash) {
  const std::string name = "ns::" + std::string(200000, 'a') + "(int)";
  auto s = parse_selectors("re:^ns::(a|b)*\\(int\\)$,re:(a|aa)*c");
  EXPECT_TRUE(s[0].matches_name(name));
  EXPECT_FALSE(s[1].matches_name(name));  // catastrophic for a backtracking engine
}
