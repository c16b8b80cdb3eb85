// Modules that arrive later (issue 17): the ld.so.cache reader, the
// library search, and which selectors wait for a file or fail.
#include <gtest/gtest.h>
#include <unistd.h>

#include <climits>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>

#include "temp_file.h"
#include "uprobes/late_modules.h"
#include "uprobes/ld_cache.h"
#include "uprobes/library_search.h"
#include "uprobes/usdt_select.h"

using namespace atrace::uprobes;
using atrace::testing::TempFile;

namespace {

std::string self_exe() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

void put32(std::string& s, uint32_t v) { s.append(reinterpret_cast<const char*>(&v), 4); }

// A cache in glibc's new format with the given (name, path) entries.
std::string make_cache(const std::vector<std::pair<std::string, std::string>>& libs) {
  const size_t header = 48, entry = 24;
  std::string strings;
  std::vector<std::pair<uint32_t, uint32_t>> offs;
  size_t base = header + entry * libs.size();
  for (const auto& [name, path] : libs) {
    uint32_t k = static_cast<uint32_t>(base + strings.size());
    strings += name + '\0';
    uint32_t v = static_cast<uint32_t>(base + strings.size());
    strings += path + '\0';
    offs.emplace_back(k, v);
  }
  std::string s = "glibc-ld.so.cache1.1";
  put32(s, static_cast<uint32_t>(libs.size()));
  put32(s, static_cast<uint32_t>(strings.size()));
  s.append(20, '\0');  // flags, padding, extension offset, unused
  for (const auto& [k, v] : offs) {
    put32(s, 0x0303);  // libc6, x86-64
    put32(s, k);
    put32(s, v);
    s.append(12, '\0');  // osversion, hwcap
  }
  return s + strings;
}

std::vector<Module> main_only() { return {{self_exe(), "atrace_unit_tests", true, false}}; }

}  // namespace

TEST(LdCache, ReadsNamesAndPaths) {
  TempFile f;
  f.set_bytes(make_cache({{"libz.so.1", "/lib/libz.so.1"}, {"libm.so.6", "/lib/libm.so.6"}}));
  auto c = read_ld_cache(f.path());
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].first, "libz.so.1");
  EXPECT_EQ(c[0].second, "/lib/libz.so.1");
  EXPECT_EQ(c[1].first, "libm.so.6");
}

TEST(LdCache, ThisSystemsCacheKnowsLibc) {
  if (!std::filesystem::exists("/etc/ld.so.cache")) GTEST_SKIP() << "no /etc/ld.so.cache here";
  bool libc = false;
  for (const auto& [name, path] : read_ld_cache()) libc |= name == "libc.so.6";
  EXPECT_TRUE(libc);
}

TEST(LdCache, NotACacheOrTruncatedIsEmpty) {
  TempFile f;
  f.set_bytes("just some text\n");
  EXPECT_TRUE(read_ld_cache(f.path()).empty());
  std::string cache = make_cache({{"libz.so.1", "/lib/libz.so.1"}});
  f.set_bytes(cache.substr(0, 60));
  EXPECT_TRUE(read_ld_cache(f.path()).empty());
  EXPECT_TRUE(read_ld_cache("/nonexistent/ld.so.cache").empty());
}

TEST(LibrarySearch, FindsByGlobInLdLibraryPathOncePerFile) {
  TempFile dir;
  std::filesystem::create_directory(dir.path());
  // An ELF file of this machine, under a library's name and a link to it.
  std::filesystem::copy_file(self_exe(), dir.path() + "/libfake.so.1");
  std::filesystem::create_symlink("libfake.so.1", dir.path() + "/libfake.so");
  LibrarySearch s = library_search(main_only(), dir.path());
  ASSERT_FALSE(s.dirs.empty());
  EXPECT_EQ(s.dirs.front(), dir.path());
  auto found = find_library_files("libfake.so*", s);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].name, "libfake.so");
  EXPECT_EQ(std::filesystem::path(found[0].path).filename(), "libfake.so.1");
  EXPECT_TRUE(find_library_files("libnothing_like_it*", s).empty());
}

TEST(LibrarySearch, LdLibraryPathOfThisProcess) {
  // Whatever it is, it is what the environment says.
  const char* env = std::getenv("LD_LIBRARY_PATH");
  EXPECT_EQ(ld_library_path_of(getpid()), env ? env : "");
}

TEST(LateModules, MappedModuleNeedsNoWait) {
  auto sel = parse_selectors("atrace_unit_tests:f");
  EXPECT_TRUE(late_modules(sel, main_only(), LibrarySearch{}).empty());
}

TEST(LateModules, PathIsTakenAsItIs) {
  TempFile dir;
  std::filesystem::create_directory(dir.path());
  const std::string lib = dir.path() + "/libplug.so";
  std::filesystem::copy_file(self_exe(), lib);
  auto mods = late_modules(parse_selectors(lib + ":f"), main_only(), LibrarySearch{});
  ASSERT_EQ(mods.size(), 1u);
  EXPECT_TRUE(mods[0].waiting);
  EXPECT_FALSE(mods[0].is_main);
  EXPECT_EQ(mods[0].name, "libplug.so");
}

TEST(LateModules, BadPathsAndNamesAreOneLineErrors) {
  try {
    late_modules(parse_selectors("/nonexistent/libx.so:f"), main_only(), LibrarySearch{});
    FAIL() << "no error";
  } catch (const SelectorError& e) {
    EXPECT_STREQ(e.what(),
                 "selector '/nonexistent/libx.so:f': /nonexistent/libx.so: No such file or "
                 "directory");
  }
  TempFile text;
  text.set_bytes("hello\n");
  try {
    late_modules(parse_selectors(text.path() + ":f"), main_only(), LibrarySearch{});
    FAIL() << "no error";
  } catch (const SelectorError& e) {
    EXPECT_NE(std::string(e.what()).find("is not an ELF file"), std::string::npos) << e.what();
  }
  try {
    late_modules(parse_selectors("libnothing_like_it*:f"), main_only(), LibrarySearch{});
    FAIL() << "no error";
  } catch (const SelectorError& e) {
    EXPECT_NE(std::string(e.what()).find("no module matches 'libnothing_like_it*'"),
              std::string::npos)
        << e.what();
  }
}

// A USDT spec's module is found by the same rule, and its errors name the
// spec.
TEST(LateModules, UsdtSpecModuleFollowsTheSameRule) {
  TempFile dir;
  std::filesystem::create_directory(dir.path());
  const std::string lib = dir.path() + "/libplug.so";
  std::filesystem::copy_file(self_exe(), lib);
  const auto specs = parse_usdt_specs(lib + ":p:n,atrace_unit_tests:p:*");
  const std::vector<Selector> sel = {specs[0].module_selector(), specs[1].module_selector()};
  auto mods = late_modules(sel, main_only(), LibrarySearch{});
  ASSERT_EQ(mods.size(), 1u);  // the second is the main program, mapped
  EXPECT_TRUE(mods[0].waiting);
  EXPECT_EQ(mods[0].name, "libplug.so");
  try {
    late_modules({parse_usdt_specs("/nonexistent/libx.so:p:n")[0].module_selector()}, main_only(),
                 LibrarySearch{});
    FAIL() << "no error";
  } catch (const SelectorError& e) {
    EXPECT_STREQ(e.what(),
                 "USDT spec '/nonexistent/libx.so:p:n': /nonexistent/libx.so: No such file or "
                 "directory");
  }
}
