#include "record/output_file.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/invoking_user.h"

namespace atrace {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw OutputError(path + ": " + what);
}

[[noreturn]] void fail_errno(const std::string& path, const char* what, int err) {
  fail(path, std::string(what) + ": " + std::strerror(err));
}

std::string dir_of(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string base_of(const std::string& path) { return path.substr(path.rfind('/') + 1); }

// What is at PATH (not following a link): 0 for nothing.
mode_t kind_at(const std::string& path) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return 0;
    fail_errno(path, "cannot create", errno);
  }
  return st.st_mode & S_IFMT;
}

}  // namespace

void check_output_path(const std::string& path) {
  if (path == "-") return;
  if (path.empty()) throw OutputError("-o needs a file name ('-' for stdout)");
  if (path.back() == '/') fail(path, "is a directory, not a trace file name");
  switch (kind_at(path)) {
    case 0:
    case S_IFREG: return;
    case S_IFLNK:
      fail(path,
           "is a symbolic link: atrace does not write through links (give the file it "
           "points to, or another name)");
    case S_IFDIR: fail(path, "is a directory, not a trace file name");
    case S_IFCHR:
    case S_IFBLK: fail(path, "is a device, not a trace file (use -o - for stdout)");
    case S_IFIFO: fail(path, "is a FIFO, not a trace file (use -o - to write to a pipe)");
    default: fail(path, "is not a regular file");
  }
}

OutputFile::OutputFile(const std::string& path) : path_(path) {
  check_output_path(path);
  if (is_stdout()) return;
  const std::string dir = dir_of(path);
  fd_.reset(open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600));
  if (!fd_ && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
    // A file system without O_TMPFILE: a private name next to PATH.
    temp_name_ = dir + "/." + base_of(path) + ".atrace-XXXXXX";
    fd_.reset(mkostemp(temp_name_.data(), O_CLOEXEC));
    if (!fd_) temp_name_.clear();
  }
  if (!fd_) fail_errno(path, "cannot create", errno);
  // 0600 whatever the umask; the sudo caller's under sudo.
  if (fchmod(fd_.get(), 0600) != 0 || !give_to_invoker(fd_.get()))
    fail_errno(path, "cannot set the owner and mode of the new file", errno);
}

OutputFile::~OutputFile() {
  if (!committed_ && !temp_name_.empty()) unlink(temp_name_.c_str());  // ours: created above
}

int OutputFile::dup_fd() const {
  if (is_stdout()) return dup(STDOUT_FILENO);
  return fcntl(fd_.get(), F_DUPFD_CLOEXEC, 0);
}

void OutputFile::write(std::string_view text) {
  const int fd = is_stdout() ? STDOUT_FILENO : fd_.get();
  while (!text.empty()) {
    ssize_t w = ::write(fd, text.data(), text.size());
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) fail_errno(path_, "write failed", errno);
    text.remove_prefix(static_cast<size_t>(w));
  }
}

void OutputFile::commit() {
  if (committed_ || is_stdout()) return;
  check_output_path(path_);  // again: something may have appeared meanwhile
  if (kind_at(path_) == S_IFREG && rename(path_.c_str(), (path_ + ".old").c_str()) != 0)
    fail_errno(path_, ("cannot rename the existing file to " + path_ + ".old").c_str(), errno);
  int r;
  if (temp_name_.empty()) {
    const std::string self = "/proc/self/fd/" + std::to_string(fd_.get());
    r = linkat(AT_FDCWD, self.c_str(), AT_FDCWD, path_.c_str(), AT_SYMLINK_FOLLOW);
  } else {
    r = renameat2(AT_FDCWD, temp_name_.c_str(), AT_FDCWD, path_.c_str(), RENAME_NOREPLACE);
  }
  if (r != 0) fail_errno(path_, "cannot create", errno);
  committed_ = true;
}

}  // namespace atrace
