// Resolving selectors against real modules: this test binary (main) and libc.
// Functions with known first instructions are written in assembly so their
// probe path is certain whatever the compiler flags.
#include <dlfcn.h>
#include <gnu/libc-version.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <climits>
#include <string>
#include <vector>

#include "uprobes/elf_symbols.h"
#include "uprobes/resolve.h"

using atrace::formats::ProbePath;
using atrace::uprobes::ElfError;
using atrace::uprobes::Module;
using atrace::uprobes::parse_selectors;
using atrace::uprobes::ProbeSite;
using atrace::uprobes::resolve_probe_sites;
using atrace::uprobes::ResolveOptions;
using atrace::uprobes::SelectorError;

asm(R"(
  .text
  .globl atrace_resolve_nop5
  .type atrace_resolve_nop5, @function
atrace_resolve_nop5:
  .byte 0x0f, 0x1f, 0x44, 0x00, 0x00
  xorl %eax, %eax
  ret
  .size atrace_resolve_nop5, .-atrace_resolve_nop5

  .globl atrace_resolve_push
  .type atrace_resolve_push, @function
atrace_resolve_push:
  pushq %rbp
  movq %rsp, %rbp
  xorl %eax, %eax
  popq %rbp
  ret
  .size atrace_resolve_push, .-atrace_resolve_push

  .globl atrace_resolve_endbr
  .type atrace_resolve_endbr, @function
atrace_resolve_endbr:
  .byte 0xf3, 0x0f, 0x1e, 0xfa
  xorl %eax, %eax
  ret
  .size atrace_resolve_endbr, .-atrace_resolve_endbr

  .globl atrace_resolve_endbr_push
  .type atrace_resolve_endbr_push, @function
atrace_resolve_endbr_push:
  .byte 0xf3, 0x0f, 0x1e, 0xfa
  pushq %rbp
  xorl %eax, %eax
  popq %rbp
  ret
  .size atrace_resolve_endbr_push, .-atrace_resolve_endbr_push

  .globl atrace_resolve_shared
  .type atrace_resolve_shared, @function
atrace_resolve_shared:
  movl %edi, %eax
.Latrace_resolve_inner:
  pushq %rbx
  popq %rbx
  ret
  .size atrace_resolve_shared, .-atrace_resolve_shared

  .globl atrace_resolve_side
  .type atrace_resolve_side, @function
atrace_resolve_side:
  xorl %eax, %eax
  jmp .Latrace_resolve_inner
  .size atrace_resolve_side, .-atrace_resolve_side
)");

extern "C" int atrace_resolve_nop5();
extern "C" int atrace_resolve_push();
extern "C" int atrace_resolve_endbr();
extern "C" int atrace_resolve_endbr_push();
extern "C" int atrace_resolve_shared(int);
extern "C" int atrace_resolve_side();

namespace atrace_resolve_test {
__attribute__((noinline)) int alpha(int x) {
  asm volatile("" : "+r"(x));
  return x + 1;
}
__attribute__((noinline)) int beta(int x) {
  asm volatile("" : "+r"(x));
  return x * 3;
}
}  // namespace atrace_resolve_test

namespace {

std::vector<Module> self_and_libc() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf);
  std::string exe(buf, n > 0 ? static_cast<size_t>(n) : 0);
  Dl_info info{};
  dladdr(reinterpret_cast<void*>(&::gnu_get_libc_version), &info);  // not intercepted by sanitizers
  std::string libc = info.dli_fname ? info.dli_fname : "";
  return {{exe, exe.substr(exe.rfind('/') + 1), true}, {libc, "libc.so.6", false}};
}

std::vector<ProbeSite> resolve(const std::string& inc, const std::string& exc = {},
                               ResolveOptions opts = {}) {
  return resolve_probe_sites(
      parse_selectors(inc),
      exc.empty() ? std::vector<atrace::uprobes::Selector>{} : parse_selectors(exc),
      self_and_libc(), opts);
}

std::string error_of(const std::string& inc, const std::vector<Module>& mods = self_and_libc()) {
  try {
    resolve_probe_sites(parse_selectors(inc), {}, mods);
  } catch (const SelectorError& e) {
    return e.what();
  } catch (const ElfError& e) {
    return std::string("ElfError: ") + e.what();
  }
  return "no error";
}

const ProbeSite* by_name(const std::vector<ProbeSite>& sites, const std::string& name) {
  for (const auto& s : sites)
    if (s.name == name) return &s;
  return nullptr;
}

}  // namespace

TEST(UprobesResolve, MainExecutableGlobWithDenseIds) {
  volatile int keep = atrace_resolve_test::alpha(1) + atrace_resolve_test::beta(2);
  (void)keep;
  const auto sites = resolve("atrace_resolve_test::*");
  ASSERT_EQ(sites.size(), 2u);
  EXPECT_EQ(sites[0].id, 1u);
  EXPECT_EQ(sites[1].id, 2u);
  EXPECT_LT(sites[0].address, sites[1].address);
  const ProbeSite* a = by_name(sites, "atrace_resolve_test::alpha(int)");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->mangled, "_ZN19atrace_resolve_test5alphaEi");
  EXPECT_EQ(a->module, self_and_libc()[0].name);
  EXPECT_EQ(a->path, self_and_libc()[0].path);
  EXPECT_GT(a->size, 0u);
  EXPECT_NE(a->entry_path, ProbePath::Unknown);
  // The offset agrees with read_functions().
  bool seen = false;
  for (const auto& f : atrace::uprobes::read_functions(a->path)) {
    if (f.mangled != a->mangled) continue;
    seen = true;
    EXPECT_EQ(f.offset + a->entry_delta, a->offset);
  }
  EXPECT_TRUE(seen);
}

TEST(UprobesResolve, ExcludeRemovesButDoesNotCountAsNoMatch) {
  const auto sites = resolve("atrace_resolve_test::*", "atrace_resolve_test::beta");
  ASSERT_EQ(sites.size(), 1u);
  EXPECT_EQ(sites[0].name, "atrace_resolve_test::alpha(int)");
  EXPECT_EQ(sites[0].id, 1u);
}

TEST(UprobesResolve, SeveralSelectorsDoNotDuplicate) {
  const auto sites =
      resolve("atrace_resolve_test::alpha,re:^atrace_resolve_test::,atrace_resolve_push");
  ASSERT_EQ(sites.size(), 3u);
  for (size_t i = 0; i < sites.size(); ++i) EXPECT_EQ(sites[i].id, i + 1);
}

TEST(UprobesResolve, EntryPathsFromFirstInstruction) {
  volatile int keep = atrace_resolve_nop5() + atrace_resolve_push() + atrace_resolve_endbr();
  (void)keep;
  auto sites = resolve("atrace_resolve_nop5,atrace_resolve_push,atrace_resolve_endbr");
  ASSERT_EQ(sites.size(), 3u);
  EXPECT_EQ(by_name(sites, "atrace_resolve_nop5")->entry_path, ProbePath::Nop5);
  EXPECT_EQ(by_name(sites, "atrace_resolve_push")->entry_path, ProbePath::Emulated);
  EXPECT_EQ(by_name(sites, "atrace_resolve_endbr")->entry_path, ProbePath::SingleStep);

  ResolveOptions old_kernel;
  old_kernel.nop5_supported = false;
  sites = resolve("atrace_resolve_nop5", {}, old_kernel);
  ASSERT_EQ(sites.size(), 1u);
  EXPECT_EQ(sites[0].entry_path, ProbePath::Emulated);
}

// uprobes/placement.h on a real module: the probe moves past endbr64 onto
// the push, unless asked not to, and not where another function of the
// module jumps into the prefix.
TEST(UprobesResolve, EntryProbePlacement) {
  volatile int keep =
      atrace_resolve_endbr_push() + atrace_resolve_shared(1) + atrace_resolve_side();
  (void)keep;
  auto sites = resolve("atrace_resolve_endbr_push,atrace_resolve_shared,atrace_resolve_side");
  ASSERT_EQ(sites.size(), 3u);
  const ProbeSite* ep = by_name(sites, "atrace_resolve_endbr_push");
  EXPECT_EQ(ep->entry_delta, 4u);
  EXPECT_EQ(ep->entry_path, ProbePath::Emulated);
  uint64_t entry = 0;
  for (const auto& f : atrace::uprobes::read_functions(ep->path))
    if (f.mangled == ep->mangled) entry = f.offset;
  EXPECT_EQ(ep->offset, entry + 4);
  // The push at +2 would be cheaper, but atrace_resolve_side enters there.
  EXPECT_EQ(by_name(sites, "atrace_resolve_shared")->entry_delta, 0u);
  EXPECT_EQ(by_name(sites, "atrace_resolve_shared")->entry_path, ProbePath::SingleStep);
  // xor, then the tail jmp (emulated) at +2.
  EXPECT_EQ(by_name(sites, "atrace_resolve_side")->entry_delta, 2u);

  ResolveOptions at_entry;
  at_entry.move_probes = false;
  sites = resolve("atrace_resolve_endbr_push", {}, at_entry);
  ASSERT_EQ(sites.size(), 1u);
  EXPECT_EQ(sites[0].entry_delta, 0u);
  EXPECT_EQ(sites[0].offset, entry);
  EXPECT_EQ(sites[0].entry_path, ProbePath::SingleStep);
}

TEST(UprobesResolve, LibraryAfterMainInModuleOrder) {
  const auto sites = resolve("libc.so.6:fopen,atrace_resolve_test::alpha");
  ASSERT_EQ(sites.size(), 2u);
  EXPECT_EQ(sites[0].name, "atrace_resolve_test::alpha(int)");
  EXPECT_EQ(sites[1].module, "libc.so.6");
  EXPECT_EQ(sites[1].path, self_and_libc()[1].path);
  EXPECT_EQ(sites[1].name, "fopen");
  EXPECT_EQ(sites[1].id, 2u);
  // Module by path glob.
  EXPECT_EQ(resolve("*/libc.so*:fopen").size(), 1u);
}

TEST(UprobesResolve, SelectorThatMatchesNothing) {
  const std::string exe = self_and_libc()[0].path;
  EXPECT_EQ(
      error_of("atrace_resolve_test::alpha,no_such_function_xyz"),
      "selector 'no_such_function_xyz' matches no function in the main executable (" + exe + ")");
  EXPECT_EQ(error_of("libc.so.6:no_such_function_xyz"),
            "selector 'libc.so.6:no_such_function_xyz' matches no function in any loaded module "
            "matching 'libc.so.6'");
  EXPECT_EQ(error_of("libnothere*:f"),
            "selector 'libnothere*:f': no loaded module matches 'libnothere*'");
  // Library symbols are not reachable without a module.
  EXPECT_NE(error_of("fopen"), "no error");
}

TEST(UprobesResolve, UnreadableModules) {
  auto mods = self_and_libc();
  mods.push_back({"/nonexistent/libgone.so", "libgone.so", false});
  // Not needed: skipped silently.
  EXPECT_EQ(error_of("lib*:fopen", mods), "no error");
  // Needed: the reason is part of the message.
  EXPECT_EQ(
      error_of("libgone.so:f", mods),
      "selector 'libgone.so:f' matches no function in any loaded module matching 'libgone.so' "
      "(/nonexistent/libgone.so: cannot open: No such file or directory)");
  // A main executable without symbols is an ElfError.
  std::vector<Module> stripped{{"/nonexistent/prog", "prog", true}};
  EXPECT_EQ(error_of("main", stripped),
            "ElfError: /nonexistent/prog: cannot open: No such file or directory");
}

TEST(UprobesResolve, NoIncludeSelectorsGiveNothing) {
  EXPECT_TRUE(resolve_probe_sites({}, {}, self_and_libc()).empty());
}
