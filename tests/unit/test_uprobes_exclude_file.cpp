// Exclude files: `--exclude=@FILE` reads them (parse_selectors_with_files),
// the recorder writes them (exclude_file.h). The round trip must be exact:
// every written selector matches its own function and none of its
// neighbours, however the C++ name looks.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "tests/unit/test_formats_util.h"
#include "uprobes/exclude_file.h"
#include "uprobes/selector.h"

using atrace::formats::ProbeInfo;
using atrace::formats::testing::TempFile;
using namespace atrace::uprobes;

namespace {

const std::string kMain = "demo";

ProbeInfo probe(uint32_t id, std::string name, std::string module = kMain) {
  ProbeInfo p;
  p.id = id;
  p.name = std::move(name);
  p.module = std::move(module);
  p.path = "/opt/x/" + p.module;
  return p;
}

// Functions whose names trip every rule of the selector syntax: overloads,
// templates (return types, commas), operators (brackets, commas, '*'),
// lambdas ('#', braces), clones ('['), and library functions of the same
// name in different modules.
std::vector<ProbeInfo> neighbours() {
  const char* names[] = {
      "f(int)",
      "f(double)",
      "f(int, int)",
      "f(int*)",
      "f(int**)",
      "f(char const*)",
      "f(int) [clone .cold]",
      "f(int) const",
      "ns::f(int)",
      "ns::g(std::map<int, int, std::less<int>, std::allocator<std::pair<int const, int> > > "
      "const&)",
      "int ns::add<int>(int, int)",
      "double ns::add<double>(double, double)",
      "long ns::add<long>(long, long)",
      "ns::Widget::operator()(int)",
      "ns::Widget::operator()(int) const",
      "ns::Widget::operator<(ns::Widget const&) const",
      "ns::Widget::operator<<(int)",
      "ns::Widget::operator<=(ns::Widget const&) const",
      "ns::Widget::operator>(ns::Widget const&) const",
      "ns::Widget::operator,(int)",
      "ns::Widget::operator[](unsigned long)",
      "ns::Widget::operator*() const",
      "ns::Widget::operator->()",
      "ns::Widget::operator->*(int)",
      "ns::Widget::operator ns::Other*() const",
      "bool ns::operator< <ns::Widget>(ns::Widget const&, ns::Widget const&)",
      "operator new(unsigned long)",
      "operator delete(void*, unsigned long)",
      "main::{lambda(int)#1}::operator()(int) const",
      "main::{lambda(int)#2}::operator()(int) const",
      "call(void (*)(int, int))",
      "call(void (*)(int))",
      "non-virtual thunk to ns::Widget::~Widget()",
      "ns::Widget::~Widget()",
      "main",
      "domain",
      "re:odd",
      " padded ",
      "a:b",
      "x\\y",
      "q?",
      "new\nline",
  };
  std::vector<ProbeInfo> out;
  uint32_t id = 1;
  for (const char* n : names) out.push_back(probe(id++, n));
  out.push_back(probe(id++, "malloc", "libc.so.6"));
  out.push_back(probe(id++, "free", "libc.so.6"));
  out.push_back(probe(id++, "malloc", "libjemalloc.so.2"));
  out.push_back(probe(id++, "f(int)", "libfoo.so"));
  out.push_back(probe(id++, "f(int)", "libfoo.so.1"));
  out.push_back(probe(id++, "f(double)", "libfoo.so.1"));
  out.push_back(probe(id++, "std::vector<int, std::allocator<int> >::push_back(int const&)",
                      "libstdc++.so.6"));
  out.push_back(probe(id++, "deflate", "lib*z[1].so"));
  out.push_back(probe(id++, "deflate", "libaz1.so"));
  out.push_back(probe(id++, "g", "lib,comma.so"));
  out.push_back(probe(id++, "g", "#lib.so"));
  out.push_back(probe(id++, "g", "@lib.so"));
  return out;
}

bool matches(const Selector& s, const ProbeInfo& p) {
  return s.matches_module(p.module, p.path, p.module == kMain) && s.matches_name(p.name);
}

// The ids of the probes some selector of `sels` matches.
std::set<uint32_t> matched(const std::vector<Selector>& sels, const std::vector<ProbeInfo>& all) {
  std::set<uint32_t> ids;
  for (const auto& p : all)
    for (const auto& s : sels)
      if (matches(s, p)) ids.insert(p.id);
  return ids;
}

std::string error_of(const std::string& list) {
  try {
    parse_selectors_with_files(list);
  } catch (const SelectorError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST(UprobesExcludeFile, EachSelectorMatchesItsFunctionAndNoNeighbour) {
  auto all = neighbours();
  for (const auto& p : all) {
    std::string sel = exclude_selector(p, p.module == kMain);
    SCOPED_TRACE("selector '" + sel + "' for '" + p.name + "' in " + p.module);
    EXPECT_EQ(sel.find('\n'), std::string::npos);
    auto parsed = parse_selectors(sel);
    ASSERT_EQ(parsed.size(), 1u);
    EXPECT_EQ(matched(parsed, all), std::set<uint32_t>{p.id});
  }
}

TEST(UprobesExcludeFile, PlainNamesStayReadable) {
  EXPECT_EQ(exclude_selector(probe(1, "main"), true), "main");
  EXPECT_EQ(exclude_selector(probe(1, "ns::f(int)"), true), "ns::f(int)");
  EXPECT_EQ(exclude_selector(probe(1, "int ns::add<int>(int, int)"), true),
            "int ns::add<int>(int, int)");
  EXPECT_EQ(exclude_selector(probe(1, "ns::Widget::operator<(ns::Widget const&) const"), true),
            "ns::Widget::operator<(ns::Widget const&) const");
  EXPECT_EQ(exclude_selector(probe(1, "ns::Widget::operator,(int)"), true),
            "ns::Widget::operator,(int)");
  EXPECT_EQ(exclude_selector(probe(1, "malloc", "libc.so.6"), false), "libc.so.6:malloc");
  // Glob characters: an anchored regex, escaped.
  EXPECT_EQ(exclude_selector(probe(1, "f(int*)"), true), "re:^f\\(int\\*\\)$");
  EXPECT_EQ(exclude_selector(probe(1, "f(int) [clone .cold]", "libfoo.so"), false),
            "libfoo.so:re:^f\\(int\\) \\[clone \\.cold\\]$");
  EXPECT_EQ(exclude_selector(probe(1, "a:b"), true), "re:^a:b$");  // not MODULE:NAME
  EXPECT_EQ(exclude_selector(probe(1, "deflate", "lib*z.so"), false), "lib\\*z.so:deflate");
}

// The whole file, read back through --exclude=@FILE: exactly the functions
// written, mixed with other items of the list.
TEST(UprobesExcludeFile, FileRoundTripsThroughAtFile) {
  auto all = neighbours();
  std::vector<ProbeInfo> detached;
  for (size_t i = 0; i < all.size(); i += 2) detached.push_back(all[i]);
  detached.push_back(all[0]);  // written once
  TempFile f(".exclude");
  write_exclude_file(f.path(), detached, kMain, "atrace record -- ./demo\n\ndetached: 27");
  std::string text = f.bytes();
  EXPECT_EQ(text.rfind("# atrace record -- ./demo\n#\n# detached: 27\n", 0), 0u) << text;
  EXPECT_EQ(text.find("\nf(int)\n"), text.rfind("\nf(int)\n"));

  std::set<uint32_t> expect;
  for (const auto& p : detached) expect.insert(p.id);
  EXPECT_EQ(matched(parse_selectors_with_files("@" + f.path()), all), expect);

  // With other items around it; "domain" is in the odd half.
  auto sels = parse_selectors_with_files("main, @" + f.path() + " ,dom*");
  expect.insert(all[35].id);
  EXPECT_EQ(all[35].name, "domain");
  EXPECT_EQ(matched(sels, all), expect);
}

TEST(UprobesExcludeFile, CommentsBlankLinesListsAndCarriageReturns) {
  TempFile f(".exclude");
  f.set_bytes(
      "# functions too short to trace\n\n   \nmain\r\n  # indented comment\n"
      "libc.so.6:malloc, libc.so.6:free\n\tre:^f\\(int\\)$  \n");
  auto sels = parse_selectors_with_files("@" + f.path());
  ASSERT_EQ(sels.size(), 4u);
  EXPECT_EQ(sels[0].pattern, "main");
  EXPECT_EQ(sels[1].module_glob, "libc.so.6");
  EXPECT_EQ(sels[2].pattern, "free");
  EXPECT_TRUE(sels[3].is_regex);
  EXPECT_TRUE(sels[3].matches_name("f(int)"));
  // An empty file is an empty list, not an error.
  f.set_bytes("# nothing was detached\n");
  EXPECT_TRUE(parse_selectors_with_files("@" + f.path()).empty());
  // Without '@' nothing is read.
  EXPECT_EQ(parse_selectors_with_files("f*,g")[1].pattern, "g");
}

// One line, naming the file (and the line), for every way it can fail.
TEST(UprobesExcludeFile, Errors) {
  EXPECT_EQ(error_of("@/nonexistent/x.exclude"),
            "cannot read selector file '/nonexistent/x.exclude': No such file or directory");
  EXPECT_EQ(error_of("f,@/"), "cannot read selector file '/': Is a directory");
  EXPECT_EQ(error_of("@"), "bad selector '@': no file name after '@'");
  TempFile f(".exclude");
  f.set_bytes("main\n# ok\nre:(\n");
  std::string e = error_of("@" + f.path());
  EXPECT_EQ(e.rfind(f.path() + ":3: bad selector 're:(': ", 0), 0u) << e;
  EXPECT_EQ(e.find('\n'), std::string::npos);
  f.set_bytes("@other.exclude\n");
  EXPECT_EQ(error_of("@" + f.path()),
            f.path() + ":1: '@other.exclude': a selector file cannot name another");
  EXPECT_THROW(write_exclude_file("/nonexistent/dir/x.exclude", {probe(1, "main")}, kMain, ""),
               ExcludeFileError);
  try {
    write_exclude_file("/nonexistent/dir/x.exclude", {}, kMain, "");
  } catch (const ExcludeFileError& err) {
    EXPECT_STREQ(err.what(),
                 "cannot write exclude file: /nonexistent/dir/x.exclude: cannot create: No such "
                 "file or directory");
  }
}

// The selector syntax's own limit, written down so a change to it is seen:
// a name without parameters also matches C++ functions whose name without
// parameters is the same.
TEST(UprobesExcludeFile, KnownLimitCNameAlsoMatchesOverloadsOfTheSameBaseName) {
  auto sel = parse_selectors(exclude_selector(probe(1, "f"), true));
  EXPECT_TRUE(sel[0].matches_name("f"));
  EXPECT_TRUE(sel[0].matches_name("f(int)"));
  EXPECT_FALSE(sel[0].matches_name("ns::f(int)"));
}
