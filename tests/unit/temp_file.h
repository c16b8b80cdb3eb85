// A path unique to the running test under $TMPDIR, removed (file or whole
// directory) when the test ends, however it ends: unit tests leave $TMPDIR
// as they found it (.ci/run checks).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace atrace::testing {

class TempFile {
 public:
  explicit TempFile(const std::string& suffix = "") {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = (std::filesystem::temp_directory_path() /
             ("atrace-test-" + std::to_string(getpid()) + "-" + info->name() + suffix + ".data"))
                .string();
  }
  ~TempFile() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

  std::string bytes() const {
    std::ifstream in(path_, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  void set_bytes(const std::string& b) const {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out << b;
  }

 private:
  std::string path_;
};

}  // namespace atrace::testing
