// Build-ids: the one in this test binary, as the toolchain wrote it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "uprobes/build_id.h"

namespace {

// `readelf -n` is the reference reader of the same note.
std::string readelf_build_id(const std::string& path) {
  std::string cmd = "readelf -n " + path + " 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return {};
  char line[512];
  std::string id;
  while (fgets(line, sizeof line, p)) {
    std::string l(line);
    auto pos = l.find("Build ID: ");
    if (pos != std::string::npos) {
      id = l.substr(pos + 10);
      while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
    }
  }
  pclose(p);
  return id;
}

}  // namespace

TEST(BuildId, MatchesReadelfOnThisBinary) {
  // Resolved here: in readelf's process /proc/self would be readelf itself.
  char self[4096] = {};
  ASSERT_GT(readlink("/proc/self/exe", self, sizeof self - 1), 0);
  std::string expected = readelf_build_id(self);
  ASSERT_FALSE(expected.empty()) << "the test binary has no build-id";
  EXPECT_EQ(atrace::uprobes::read_build_id(self), expected);
}

TEST(BuildId, EmptyForNonElfAndMissingFiles) {
  EXPECT_EQ(atrace::uprobes::read_build_id("/etc/hostname"), "");
  EXPECT_EQ(atrace::uprobes::read_build_id("/nonexistent"), "");
}
