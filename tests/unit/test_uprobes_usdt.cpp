// USDT notes and specs, checked on this test binary itself: it carries
// probes of include/atrace/probe.h, so read_usdt_probes() must find them
// with the file offsets of their 5-byte NOPs and of their semaphore.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "include/atrace/probe.h"
#include "uprobes/elf_symbols.h"
#include "uprobes/selector.h"
#include "uprobes/usdt_notes.h"
#include "uprobes/usdt_select.h"
#include "uprobes/usdt_semaphore.h"

namespace atrace::uprobes {
namespace {

// Fires test probes (never while this test runs traced, so they are no-ops).
__attribute__((noinline)) int fire_probes(int x, const char* s) {
  ATRACE_EVENT(unittest, ints, x, -x);
  ATRACE_EVENT(unittest, text, s);
  ATRACE_BEGIN(unittest, span);
  ATRACE_END(unittest, span);
  return ATRACE_ENABLED(unittest, ints) ? 1 : 0;
}

std::string self_exe() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

std::vector<char> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

const UsdtProbe* find(const std::vector<UsdtProbe>& v, const std::string& provider,
                      const std::string& name) {
  for (const auto& p : v)
    if (p.provider == provider && p.name == name) return &p;
  return nullptr;
}

TEST(UprobesUsdt, HeaderProbesAreFoundWithTheirNop5AndSemaphore) {
  EXPECT_EQ(fire_probes(3, "x"), 0);
  const std::string exe = self_exe();
  auto probes = read_usdt_probes(exe);
  const auto bytes = file_bytes(exe);
  for (const char* name : {"ints", "text", "span__begin", "span__end"}) {
    const UsdtProbe* p = find(probes, "unittest", name);
    ASSERT_NE(p, nullptr) << name;
    ASSERT_LT(p->offset + 5, bytes.size());
    EXPECT_EQ(std::memcmp(bytes.data() + p->offset, "\x0f\x1f\x44\x00\x00", 5), 0) << name;
    EXPECT_EQ(p->path_kind, formats::ProbePath::Nop5) << name;
    EXPECT_NE(p->semaphore, 0u) << name;
    // Nobody traces this process: its semaphore, read through /proc, is 0.
    auto sem = read_semaphore(getpid(), exe, p->semaphore_offset);
    ASSERT_TRUE(sem.has_value()) << name;
    EXPECT_EQ(*sem, 0) << name;
  }
  const UsdtProbe* ints = find(probes, "unittest", "ints");
  ASSERT_EQ(ints->arg_list.size(), 2u);
  EXPECT_EQ(ints->arg_list[0].size, 8);
  EXPECT_TRUE(ints->arg_list[0].is_signed);
  EXPECT_EQ(find(probes, "unittest", "text")->arg_list.size(), 1u);
  EXPECT_TRUE(find(probes, "unittest", "span__begin")->arg_list.empty());
}

TEST(UprobesUsdt, ArgumentStrings) {
  auto a = parse_usdt_args("-4@%edi 8@-16(%rbp) 1@$5 %rax");
  ASSERT_EQ(a.size(), 4u);
  EXPECT_EQ(a[0].size, 4);
  EXPECT_TRUE(a[0].is_signed);
  EXPECT_EQ(a[0].location, "%edi");
  EXPECT_EQ(a[1].size, 8);
  EXPECT_FALSE(a[1].is_signed);
  EXPECT_EQ(a[1].location, "-16(%rbp)");
  EXPECT_EQ(a[2].size, 1);
  EXPECT_EQ(a[2].location, "$5");
  EXPECT_EQ(a[3].size, 8);
  EXPECT_EQ(a[3].location, "%rax");
  EXPECT_TRUE(parse_usdt_args("").empty());
}

TEST(UprobesUsdt, SpecsParse) {
  auto s = parse_usdt_specs("app:req*(str,int), libfoo.so*:foo:bar , p:n(-,str)");
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].module_glob, "");
  EXPECT_EQ(s[0].provider_glob, "app");
  EXPECT_EQ(s[0].name_glob, "req*");
  EXPECT_EQ(s[0].string_mask, 1u);
  EXPECT_EQ(s[1].module_glob, "libfoo.so*");
  EXPECT_EQ(s[1].provider_glob, "foo");
  EXPECT_EQ(s[1].name_glob, "bar");
  EXPECT_EQ(s[1].string_mask, 0u);
  EXPECT_EQ(s[2].string_mask, 2u);
  EXPECT_TRUE(parse_usdt_specs("").empty());
}

TEST(UprobesUsdt, BadSpecsNameThemselves) {
  for (const char* bad : {"app", "a:b:c:d", "app:", ":x", "app:x(float)", "app:x(str,str,str)",
                          "app:x(str", "a:b,,c:d"}) {
    try {
      parse_usdt_specs(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const SelectorError& e) {
      EXPECT_NE(std::string(e.what()).find("USDT spec"), std::string::npos) << e.what();
    }
  }
  // A malformed one says what a spec looks like.
  for (const char* bad : {"app", "a:b:c:d", "app:", ":x"}) {
    try {
      parse_usdt_specs(bad);
    } catch (const SelectorError& e) {
      EXPECT_NE(std::string(e.what()).find("expected provider:name or MODULE:provider:name"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(UprobesUsdt, ResolvePairsBeginAndEndIntoIntervals) {
  Module self{self_exe(), "atrace_unit_tests", true};
  auto targets = resolve_usdt(parse_usdt_specs("unittest:*(str)"), {self}, 10);
  ASSERT_EQ(targets.size(), 3u);  // ints, text, and the span interval
  int intervals = 0;
  for (const auto& t : targets) {
    EXPECT_GE(t.id, 10u);
    if (t.kind == formats::ProbeKind::Interval) {
      intervals++;
      EXPECT_EQ(t.name, "span");
      EXPECT_EQ(t.display_name(), "unittest:span");
      EXPECT_EQ(t.string_mask, 0u);  // intervals carry no arguments
      EXPECT_FALSE(t.end_sites.empty());
    } else {
      EXPECT_EQ(t.string_mask, 1u);
    }
    EXPECT_TRUE(t.has_semaphore());
  }
  EXPECT_EQ(intervals, 1);
  // Only the begin: an ordinary probe, no interval.
  auto begin_only = resolve_usdt(parse_usdt_specs("unittest:span__begin"), {self}, 1);
  ASSERT_EQ(begin_only.size(), 1u);
  EXPECT_EQ(begin_only[0].kind, formats::ProbeKind::Usdt);
  try {
    resolve_usdt(parse_usdt_specs("unittest:nosuch"), {self}, 1);
    ADD_FAILURE() << "a spec matching nothing was accepted";
  } catch (const SelectorError& e) {
    EXPECT_NE(std::string(e.what()).find("matches no probe"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("unittest:ints"), std::string::npos) << e.what();
  }
}

// The README's own example: a glob before a typed spec of one of its
// probes. The typed spec gives that probe's types whatever the order; the
// glob's other probes keep integers.
TEST(UprobesUsdt, TypedSpecWinsOverGlobWhateverTheOrder) {
  Module self{self_exe(), "atrace_unit_tests", true};
  for (const char* list : {"unittest:*,unittest:text(str)", "unittest:text(str),unittest:*"}) {
    auto targets = resolve_usdt(parse_usdt_specs(list), {self}, 1);
    ASSERT_EQ(targets.size(), 3u) << list;
    for (const auto& t : targets) {
      if (t.name == "text") EXPECT_EQ(t.string_mask, 1u) << list;
      else EXPECT_EQ(t.string_mask, 0u) << list << ": " << t.name;
    }
  }
}

}  // namespace
}  // namespace atrace::uprobes
