// Stack-frame symbols at report time (uprobes/module_symbols.h) for a
// module the reading host no longer has at its path: a container's, under
// the root its process had (ProcessInfo::root), or the build's separate
// debug file. The build id decides which file is the traced one.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "temp_file.h"
#include "uprobes/build_id.h"
#include "uprobes/elf_symbols.h"
#include "uprobes/module_symbols.h"
#include "uprobes/proc_maps.h"

using namespace atrace::uprobes;
namespace fs = std::filesystem;

namespace {

// This process's libc: a file every test host has, with getpid in it.
std::string libc_path() {
  for (const auto& m : file_mappings(getpid()))
    if (fs::path(m.path).filename().string().rfind("libc.so", 0) == 0) return m.path;
  return "";
}

uint64_t offset_of(const std::string& path, const std::string& name) {
  for (const auto& f : read_functions(path))
    if (f.demangled == name) return f.offset;
  return 0;
}

}  // namespace

// The container is gone, its root stays: /opt/app/libc-copy.so is found
// there, and only there.
TEST(ModuleSymbols, UnderTheProcessRoot) {
  const std::string libc = libc_path();
  ASSERT_FALSE(libc.empty());
  const std::string id = read_build_id(libc);
  ASSERT_FALSE(id.empty());
  const uint64_t getpid_at = offset_of(libc, "getpid");
  ASSERT_NE(getpid_at, 0u);

  atrace::testing::TempFile root;
  fs::create_directories(root.path() + "/opt/app");
  fs::copy_file(libc, root.path() + "/opt/app/libc-copy.so");
  const std::string seen = "/opt/app/libc-copy.so";  // the path the trace has
  ASSERT_FALSE(fs::exists(seen));

  ModuleSymbols files;
  auto sym = files.at(seen, id, getpid_at + 3, root.path());
  ASSERT_TRUE(sym);
  EXPECT_EQ(sym->name, "getpid");
  EXPECT_EQ(sym->offset, 3u);
  // Another build than the one traced: neither the copy nor anything else.
  EXPECT_FALSE(files.at(seen, std::string(id.size(), 'f'), getpid_at, root.path()));
}

// Nothing at the path, no root: the separate debug file of the build id
// (libc6-dbg here) names it, where it is installed.
TEST(ModuleSymbols, FromTheDebugFileOfTheBuildId) {
  const std::string libc = libc_path();
  ASSERT_FALSE(libc.empty());
  const std::string id = read_build_id(libc);
  ASSERT_GT(id.size(), 2u);
  const std::string debug =
      "/usr/lib/debug/.build-id/" + id.substr(0, 2) + "/" + id.substr(2) + ".debug";
  if (!fs::exists(debug)) GTEST_SKIP() << "no " << debug << " (libc's debug file) here";
  const uint64_t getpid_at = offset_of(libc, "getpid");
  ASSERT_NE(getpid_at, 0u);
  ModuleSymbols files;
  auto sym = files.at("/nonexistent/libc.so.6", id, getpid_at);
  ASSERT_TRUE(sym);
  EXPECT_EQ(sym->offset, 0u);
  EXPECT_NE(sym->name.find("getpid"), std::string::npos) << sym->name;
}
