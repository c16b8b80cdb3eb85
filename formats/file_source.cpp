#include "formats/file_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "base/diagnostics.h"
#include "formats/format_v2.h"
#include "formats/trace_reader.h"

namespace atrace::formats {
namespace {

[[noreturn]] void fail(const std::string& name, const char* what, int err) {
  std::string msg = name + ": " + what + ": " + base::errno_text(err);
  if (err == ENOENT) msg += " (record a trace with 'atrace record')";
  throw TraceError(msg);
}

// An anonymous file in the temp directory, for spooling stdin.
int anonymous_file() {
  const char* env = std::getenv("TMPDIR");
  std::string dir = env && *env ? env : "/tmp";
  int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0) return fd;
  std::string templ = dir + "/atrace-stdin-XXXXXX";  // file systems without O_TMPFILE
  fd = ::mkstemp(templ.data());
  if (fd >= 0) ::unlink(templ.c_str());
  return fd;
}

void write_all(int fd, const char* p, size_t n, const std::string& name) {
  while (n) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) fail(name, "cannot spool to a temporary file", errno);
    p += w;
    n -= static_cast<size_t>(w);
  }
}

int spool(int in, const std::string& name) {
  int fd = anonymous_file();
  if (fd < 0) fail(name, "cannot create a temporary file to read it", errno);
  char buf[1 << 16];
  uint64_t total = 0;
  for (;;) {
    ssize_t r = ::read(in, buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      int err = errno;
      ::close(fd);
      fail(name, "cannot read", err);
    }
    if (r == 0) break;
    // Not a trace (/dev/zero, text): said at once, nothing spooled.
    bool ours = true;
    if (total < sizeof v2::kMagic) {
      const size_t n =
          std::min(sizeof v2::kMagic - static_cast<size_t>(total), static_cast<size_t>(r));
      ours = std::memcmp(buf, v2::kMagic + total, n) == 0;
    }
    total += static_cast<uint64_t>(r);
    if (!ours || total > kMaxSpoolBytes) {
      ::close(fd);
      if (!ours) throw TraceError(name + ": not an atrace trace file");
      throw TraceError(name + ": more than " + std::to_string(kMaxSpoolBytes >> 30) +
                       " GiB from a pipe: give the trace as a file (-i FILE)");
    }
    try {
      write_all(fd, buf, static_cast<size_t>(r), name);
    } catch (...) {
      ::close(fd);
      throw;
    }
  }
  return fd;
}

}  // namespace

FileSource::FileSource(const std::string& path) : name_(path == "-" ? "stdin" : path) {
  fd_ = path == "-" ? spool(STDIN_FILENO, name_) : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) fail(name_, "cannot open", errno);
  struct stat st;
  if (::fstat(fd_, &st) == 0 &&
      (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode) || S_ISSOCK(st.st_mode))) {
    // A pipe given by name (/dev/stdin, <(...)): spooled like stdin.
    int pipe_fd = fd_;
    try {
      fd_ = spool(pipe_fd, name_);
    } catch (...) {
      ::close(pipe_fd);
      throw;
    }
    ::close(pipe_fd);
  }
  if (::fstat(fd_, &st) != 0) {
    int err = errno;
    ::close(fd_);
    fail(name_, "cannot read", err);
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd_);
    throw TraceError(name_ + ": is a directory, not an atrace trace file");
  }
  size_ = static_cast<uint64_t>(st.st_size);
}

FileSource::~FileSource() {
  if (fd_ >= 0) ::close(fd_);
}

size_t FileSource::read_at(uint64_t off, void* buf, size_t n) const {
  if (off >= size_) return 0;
  if (n > size_ - off) n = static_cast<size_t>(size_ - off);
  size_t done = 0;
  auto* p = static_cast<char*>(buf);
  while (done < n) {
    ssize_t r = ::pread(fd_, p + done, n - done, static_cast<off_t>(off + done));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw TraceError(name_ + ": cannot read: " + base::errno_text(errno));
    if (r == 0) break;
    done += static_cast<size_t>(r);
  }
  return done;
}

}  // namespace atrace::formats
