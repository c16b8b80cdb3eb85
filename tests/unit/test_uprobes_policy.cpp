// Which functions get which probes (uprobes/probe_policy.h), and how
// resolving reports the ones left out.
#include <gtest/gtest.h>
#include <unistd.h>

#include "uprobes/probe_policy.h"
#include "uprobes/proc_maps.h"
#include "uprobes/resolve.h"
#include "uprobes/selector.h"
#include "uprobes/unwind_points.h"

#include <fcntl.h>

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

// The shortest run of whole instructions before a ret that holds a jump.
TEST(UnwindPoints, WindowBeforeARet) {
  // mov %r15d,%eax; pop %rbx; pop %r12; pop %r13; pop %rbp; ret
  const uint8_t code[] = {0x44, 0x89, 0xf8, 0x5b, 0x41, 0x5c, 0x41, 0x5d, 0x5d, 0xc3};
  EXPECT_EQ(window_before(code, sizeof code, 9, 5), 4u);         // pop %r12 .. ret: 6 bytes
  EXPECT_EQ(window_before(code, sizeof code, 9, 1), 9u);         // the ret alone
  EXPECT_EQ(window_before(code, sizeof code, 9, 10), 0u);        // all of it
  EXPECT_EQ(window_before(code, sizeof code, 9, 11), SIZE_MAX);  // not enough code
  EXPECT_EQ(window_before(code, sizeof code, 8, 5), 4u);         // pop %r12 .. pop %rbp: 5 bytes
  EXPECT_EQ(window_before(code, sizeof code, 5, 5), SIZE_MAX);   // not an instruction's start
}

// The unwind guard's points in this process: libc's stack switches, and
// each `ret` of libgcc's stack walk (where its frames are re-armed), which
// read as a ret instruction in the file.
TEST(UnwindPoints, SwitchesAndTheEndsOfTheWalk) {
  const auto points = find_unwind_points(process_modules(getpid()));
  bool swapcontext = false, setcontext = false;
  int walk = 0, walk_ends = 0, late_ends = 0;
  for (const auto& p : points) {
    if (p.role == UnwindRole::Switch && p.path.find("libc.so.6") != std::string::npos) {
      swapcontext |= p.name == "swapcontext";
      setcontext |= p.name == "setcontext";
    }
    if (p.role == UnwindRole::Walk) walk++;
    // glibc's backtrace() and its rets, with a window for the fast path.
    if (p.role == UnwindRole::LateWalk) {
      EXPECT_EQ(p.name, "backtrace");
    }
    if (p.role == UnwindRole::LateWalkEnd) {
      EXPECT_EQ(p.name, "backtrace");
      EXPECT_NE(p.window, 0u);
      late_ends++;
    }
    if (p.role != UnwindRole::WalkEnd) continue;
    walk_ends++;
    EXPECT_EQ(p.name, "_Unwind_Backtrace");
    uint8_t b[2] = {};
    int fd = open(p.path.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0) << p.path;
    ASSERT_EQ(pread(fd, b, 2, static_cast<off_t>(p.offset)), 2);
    close(fd);
    EXPECT_TRUE(b[0] == 0xc3 || (b[0] == 0xf3 && b[1] == 0xc3)) << p.path << "+" << p.offset;
    // The fast path's window before it: whole instructions, at least the
    // 5 bytes of a jump, ending with the ret (libgcc's epilogue: pops).
    ASSERT_NE(p.window, 0u) << p.path << "+" << p.offset;
    EXPECT_LT(p.window, p.offset);
    EXPECT_GE(p.offset + (b[0] == 0xc3 ? 1 : 2) - p.window, 5u);
    EXPECT_LT(p.offset - p.window, 5u + 15u);
  }
  EXPECT_TRUE(swapcontext);
  EXPECT_TRUE(setcontext);
  EXPECT_GE(late_ends, 1);
  // libgcc's entry points start with endbr64 (single-stepped) then push
  // %rbp (emulated): the probe goes on the push.
  for (const auto& p : points) {
    if (p.name != "_Unwind_RaiseException" || p.offset == p.entry) continue;
    uint8_t b[5] = {};
    int fd = open(p.path.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(pread(fd, b, 5, static_cast<off_t>(p.entry)), 5);
    close(fd);
    EXPECT_EQ(b[0], 0xf3) << "moved past an entry that is not endbr64";
    EXPECT_EQ(p.offset, p.entry + 4);
    EXPECT_EQ(b[4], 0x55);
  }
  ASSERT_GE(walk, 1);
  EXPECT_GE(walk_ends, walk);
  // The switches are probed by the guard, not kept from atrace's probes:
  // setcontext keeps both (it never returns), swapcontext none (returns
  // twice); the walk's entry never gets atrace's.
  UnwindRole r;
  ASSERT_TRUE(unwind_role("setcontext", &r));
  EXPECT_EQ(r, UnwindRole::Switch);
  EXPECT_FALSE(reads_own_return_address(r));
  ASSERT_TRUE(unwind_role("_Unwind_Backtrace", &r));
  EXPECT_TRUE(reads_own_return_address(r));
}

}  // namespace
