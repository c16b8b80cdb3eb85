// Which functions get which probes (uprobes/probe_policy.h), and how
// resolving reports the ones left out.
#include <gtest/gtest.h>
#include <unistd.h>

#include "uprobes/probe_policy.h"
#include "uprobes/proc_maps.h"
#include "uprobes/resolve.h"
#include "uprobes/selector.h"

namespace {

using namespace atrace::uprobes;

ElfFunction named(const std::string& name, std::vector<std::string> aliases = {}) {
  ElfFunction f;
  f.mangled = f.demangled = name;
  f.aliases = std::move(aliases);
  return f;
}

TEST(UprobesPolicy, ColdFragments) {
  EXPECT_TRUE(is_cold_fragment("checked.cold"));
  EXPECT_TRUE(is_cold_fragment("checked.cold.12"));
  EXPECT_TRUE(is_cold_fragment("f.constprop.0.cold"));
  EXPECT_TRUE(is_cold_fragment("ns::f(int) [clone .cold]"));
  EXPECT_FALSE(is_cold_fragment("cold"));
  EXPECT_FALSE(is_cold_fragment("coldstart"));
  EXPECT_FALSE(is_cold_fragment("f.part.0"));  // called, with a real return
  EXPECT_FALSE(is_cold_fragment("f.colder"));
  EXPECT_FALSE(probe_policy(named("checked.cold")).entry);
}

TEST(UprobesPolicy, ByName) {
  for (const char* n : {"setjmp", "_setjmp", "__sigsetjmp", "getcontext", "swapcontext",
                        "__restore_rt", "_dl_runtime_resolve_xsavec"}) {
    const ProbePolicy p = probe_policy(named(n));
    EXPECT_FALSE(p.entry) << n;
    EXPECT_FALSE(p.ret) << n;
    EXPECT_FALSE(p.reason.empty()) << n;
  }
  // Any alias of the address decides.
  EXPECT_FALSE(probe_policy(named("bsd_setjmp_alias", {"_setjmp"})).entry);
  for (const char* n : {"fork", "vfork", "longjmp", "siglongjmp", "setcontext", "_exit", "exit",
                        "abort", "main", "posix_spawn", "setjmp_helper"}) {
    const ProbePolicy p = probe_policy(named(n));
    EXPECT_TRUE(p.entry && p.ret) << n;
    EXPECT_TRUE(p.reason.empty()) << n;
  }
  ElfFunction start = named("_start");
  start.entry_point = true;
  EXPECT_FALSE(probe_policy(start).entry);
  ElfFunction stub = named("puts@plt");
  stub.in_plt = true;
  EXPECT_FALSE(probe_policy(stub).entry);
}

// libc's setjmp family is matched by a glob but never becomes a site; the
// selector's status line names them once; a selector naming only them is
// an error saying why.
TEST(UprobesPolicy, ResolveLeavesThemOutAndSaysSo) {
  auto modules = process_modules(getpid());
  const auto include = parse_selectors("libc.so.6:[sg]et*");
  ResolveNotes notes;
  auto sites = resolve_probe_sites(include, {}, modules, {}, &notes);
  for (const auto& s : sites) {
    EXPECT_NE(s.name, "setjmp");
    EXPECT_NE(s.name, "getcontext");
  }
  bool saw_setjmp = false;
  for (const auto& k : notes.skipped) saw_setjmp |= k.site.name == "setjmp";
  EXPECT_TRUE(saw_setjmp);
  // One line for the selector; gettimeofday, an IFUNC that resolves into
  // the vDSO, is named in the IFUNC line.
  const auto lines = notes.lines(include);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find("libc.so.6:[sg]et*"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("returns twice"), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find("libc.so.6:gettimeofday"), std::string::npos) << lines[1];
  try {
    resolve_probe_sites(parse_selectors("libc.so.6:setjmp"), {}, modules);
    FAIL() << "setjmp alone must not resolve";
  } catch (const SelectorError& e) {
    EXPECT_NE(std::string(e.what()).find("returns twice"), std::string::npos) << e.what();
  }
}

}  // namespace
