// `atrace report --html=FILE`: the option, and writing the page so that a
// failure never leaves a half-written file under FILE's name.
#include "tools/report_html_option.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "output/output.h"

namespace atrace::tools {

namespace {

bool write_all(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    ssize_t w = ::write(fd, s.data() + done, s.size() - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<size_t>(w);
  }
  return true;
}

bool fail(const std::string& path, int err) {
  std::fprintf(stderr, "atrace: --html: cannot write %s: %s\n", path.c_str(), std::strerror(err));
  return false;
}

// Straight into an existing file that is not a regular one (a FIFO,
// /dev/stdout): renaming over it would replace it.
bool write_in_place(const std::string& path, const std::string& page) {
  int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) return fail(path, errno);
  bool ok = write_all(fd, page);
  int err = errno;
  if (::close(fd) != 0 && ok) {
    ok = false;
    err = errno;
  }
  return ok || fail(path, err);
}

// A temporary file in FILE's directory (so the rename stays on one file
// system), renamed over FILE once complete; removed after any failure.
bool write_replacing(const std::string& path, const std::string& page) {
  std::string tmp = path + ".tmp-XXXXXX";
  int fd = ::mkstemp(tmp.data());
  if (fd < 0) return fail(path, errno);
  mode_t mask = ::umask(0);
  ::umask(mask);
  bool ok = ::fchmod(fd, 0666 & ~mask) == 0 && write_all(fd, page);
  int err = errno;
  if (::close(fd) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (ok && ::rename(tmp.c_str(), path.c_str()) != 0) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    ::unlink(tmp.c_str());
    return fail(path, err);
  }
  return true;
}

}  // namespace

void add_report_html_option(cli::Command report, std::string& path) {
  cli::Option html = report.option(
      "--html", path,
      "Write a self-contained HTML page to FILE ('-': stdout) instead of the table: the "
      "functions (sortable), a flame graph and a timeline of the threads (docs/report-html.md)");
  html.type_name("FILE");
  for (const char* other : {"--tree", "--callers", "--callees", "--diff", "--syscalls", "--format"})
    if (auto o = report.find(other)) html.excludes(*o);
}

bool write_report_html(const std::string& path, const std::string& data) {
  std::string page = analysis::html_page(data);
  if (path == "-") {
    if (!write_all(STDOUT_FILENO, page)) return fail("stdout", errno);
    return true;
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    if (S_ISDIR(st.st_mode)) return fail(path, EISDIR);
    return write_in_place(path, page);
  }
  return write_replacing(path, page);
}

}  // namespace atrace::tools
