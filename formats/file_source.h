// A trace file opened for random access (pread), owned RAII.
//
// The reader needs to seek: the trailer is at the end, blocks are read per
// thread out of file order. stdin cannot seek, so "-" is first spooled to an
// unlinked temporary file (O_TMPFILE, or mkstemp + unlink) that disappears
// when it is closed; that costs one copy of the trace on the temp file system.
#pragma once

#include <cstdint>
#include <string>

namespace atrace::formats {

// The most read from a pipe or stdin (spooled to the temp directory): a
// documented limit, so an endless input cannot fill the file system.
inline constexpr uint64_t kMaxSpoolBytes = 4ull << 30;

class FileSource {
 public:
  // Throws TraceError "NAME: cannot open: ..." (NAME is "stdin" for "-").
  explicit FileSource(const std::string& path);
  ~FileSource();
  FileSource(const FileSource&) = delete;
  FileSource& operator=(const FileSource&) = delete;

  // Size when opened: a file still being written is read up to there.
  uint64_t size() const { return size_; }
  // Reads up to n bytes at off; returns how many (fewer only at the end).
  size_t read_at(uint64_t off, void* buf, size_t n) const;
  const std::string& name() const { return name_; }

 private:
  int fd_ = -1;
  uint64_t size_ = 0;
  std::string name_;
};

}  // namespace atrace::formats
