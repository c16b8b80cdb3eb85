#include "tools/terminal.h"
#include "base/diagnostics.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace atrace::tools {
namespace {

bool env_set(const char* name) {
  const char* v = std::getenv(name);
  return v && *v;
}

}  // namespace

void add_terminal_options(cli::Command cmd, TerminalArgs& a) {
  cmd.option("--color", a.color,
             "Colour on a terminal: auto (when stdout is one and NO_COLOR is not set), "
             "always or never")
      .one_of({"auto", "always", "never"})
      .capture_default()
      .type_name("WHEN");
  cmd.flag("--no-pager", a.no_pager,
           "Do not page the output on a terminal (the pager is $PAGER, by default less -FRX)");
}

bool use_color(const TerminalArgs& a) {
  if (a.color == "always") return true;
  if (a.color == "never") return false;
  const char* term = std::getenv("TERM");
  return ::isatty(STDOUT_FILENO) && !env_set("NO_COLOR") && !(term && !std::strcmp(term, "dumb"));
}

Pager::Pager(const TerminalArgs& a) {
  if (a.no_pager || !::isatty(STDOUT_FILENO)) return;
  const char* env = std::getenv("PAGER");
  std::string pager = env ? env : "less -FRX";
  if (pager.empty() || pager == "cat") return;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return;  // no pager: the output goes straight out
  std::fflush(stdout);
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return;
  }
  if (pid == 0) {
    ::dup2(fds[0], STDIN_FILENO);
    // less: quit when the output fits a screen, keep colours, leave the
    // screen as it was; git sets the same when LESS is unset.
    ::setenv("LESS", env_set("LESS") ? std::getenv("LESS") : "FRX", 1);
    ::execl("/bin/sh", "sh", "-c", pager.c_str(), static_cast<char*>(nullptr));
    base::error("pager '%s': %s", pager.c_str(), base::errno_text(errno).c_str());
    ::_exit(127);
  }
  ::dup2(fds[1], STDOUT_FILENO);
  ::close(fds[0]);
  ::close(fds[1]);
  pid_ = pid;
}

Pager::~Pager() {
  if (pid_ < 0) return;
  std::fflush(stdout);
  ::close(STDOUT_FILENO);  // the pager sees the end of its input
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace atrace::tools
