#include "base/new_file.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/diagnostics.h"
#include "base/invoking_user.h"

namespace atrace {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw NewFileError(path + ": " + what);
}

[[noreturn]] void fail_errno(const std::string& path, const std::string& what, int err) {
  fail(path, what + ": " + base::errno_text(err));
}

std::string dir_of(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// A private name next to PATH (the same file system, so rename works).
std::string temp_template(const std::string& path) {
  return dir_of(path) + "/." + path.substr(path.rfind('/') + 1) + ".atrace-XXXXXX";
}

// What is at PATH (not following a link): 0 for nothing.
mode_t kind_at(const std::string& path) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return 0;
    fail_errno(path, "cannot create", errno);
  }
  return st.st_mode & S_IFMT;
}

// Gives the unnamed file `fd` a fresh private name next to PATH (for a
// rename over an existing file: linkat never replaces).
std::string link_under_temp_name(int fd, const std::string& path) {
  const std::string self = "/proc/self/fd/" + std::to_string(fd);
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string name = temp_template(path);
    const char* chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    for (size_t i = name.size() - 6; i < name.size(); ++i) name[i] = chars[arc4random_uniform(62)];
    if (linkat(AT_FDCWD, self.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW) == 0) return name;
    if (errno != EEXIST) fail_errno(path, "cannot create", errno);
  }
  fail_errno(path, "cannot create", EEXIST);
}

}  // namespace

void check_new_file_path(const std::string& path) {
  if (path == "-") return;
  if (path.empty()) throw NewFileError("empty file name ('-' for stdout)");
  if (path.back() == '/') fail(path, "is a directory, not a file name");
  switch (kind_at(path)) {
    case 0:
    case S_IFREG: return;
    case S_IFLNK:
      fail(path,
           "is a symbolic link: atrace does not write through links (give the file it "
           "points to, or another name)");
    case S_IFDIR: fail(path, "is a directory, not a file name");
    case S_IFCHR:
    case S_IFBLK: fail(path, "is a device, not a regular file ('-' writes to stdout)");
    case S_IFIFO: fail(path, "is a FIFO, not a regular file ('-' writes to stdout, for a pipe)");
    default: fail(path, "is not a regular file");
  }
}

NewFile::NewFile(const std::string& path, IfExists existing) : path_(path), existing_(existing) {
  check_new_file_path(path);
  if (is_stdout()) return;
  fd_.reset(open(dir_of(path).c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600));
  if (!fd_ && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
    // A file system without O_TMPFILE: mkostemp creates with O_EXCL, 0600.
    temp_name_ = temp_template(path);
    fd_.reset(mkostemp(temp_name_.data(), O_CLOEXEC));
    if (!fd_) temp_name_.clear();
  }
  if (!fd_) fail_errno(path, "cannot create", errno);
  // 0600 whatever the umask; the sudo caller's under sudo.
  if (fchmod(fd_.get(), 0600) != 0 || !give_to_invoker(fd_.get())) {
    int err = errno;
    if (!temp_name_.empty()) unlink(temp_name_.c_str());
    fail_errno(path, "cannot set the owner and mode of the new file", err);
  }
}

NewFile::~NewFile() {
  if (!committed_ && !temp_name_.empty()) unlink(temp_name_.c_str());  // ours: created above
}

int NewFile::fd() const { return is_stdout() ? STDOUT_FILENO : fd_.get(); }

int NewFile::dup_fd() const { return fcntl(fd(), F_DUPFD_CLOEXEC, 0); }

void NewFile::write(std::string_view text) {
  while (!text.empty()) {
    ssize_t w = ::write(fd(), text.data(), text.size());
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) fail_errno(display(), "write failed", errno);
    text.remove_prefix(static_cast<size_t>(w));
  }
}

void NewFile::commit() {
  if (committed_ || is_stdout()) return;
  check_new_file_path(path_);  // again: something may have appeared meanwhile
  const bool exists = kind_at(path_) == S_IFREG;
  if (exists && existing_ == IfExists::KeepAsOld &&
      rename(path_.c_str(), (path_ + ".old").c_str()) != 0)
    fail_errno(path_, "cannot rename the existing file to " + path_ + ".old", errno);
  int r;
  if (exists && existing_ == IfExists::Replace) {
    // One rename over the old file: readers see the old or the new one.
    if (temp_name_.empty()) temp_name_ = link_under_temp_name(fd_.get(), path_);
    r = rename(temp_name_.c_str(), path_.c_str());
  } else if (temp_name_.empty()) {
    const std::string self = "/proc/self/fd/" + std::to_string(fd_.get());
    r = linkat(AT_FDCWD, self.c_str(), AT_FDCWD, path_.c_str(), AT_SYMLINK_FOLLOW);
  } else {
    r = renameat2(AT_FDCWD, temp_name_.c_str(), AT_FDCWD, path_.c_str(), RENAME_NOREPLACE);
  }
  if (r != 0) fail_errno(path_, "cannot create", errno);
  committed_ = true;
}

}  // namespace atrace
