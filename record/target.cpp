#include "record/target.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>
#include <utility>

#include "base/diagnostics.h"
#include "base/whole_file.h"
#include "record/stop_signals.h"

namespace atrace {

namespace {

int pidfd_open(pid_t pid) { return static_cast<int>(syscall(SYS_pidfd_open, pid, 0)); }

int shell_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

}  // namespace

Target Target::attach(pid_t pid) {
  if (pid <= 0) throw TargetError("invalid pid " + std::to_string(pid));
  if (kill(pid, 0) != 0 && errno == ESRCH)
    throw TargetError("no process with pid " + std::to_string(pid));
  Target t;
  t.pid_ = pid;
  t.pidfd_.reset(pidfd_open(pid));
  if (!t.pidfd_) {
    if (errno == ESRCH) throw TargetError("no process with pid " + std::to_string(pid));
    throw TargetError("cannot watch pid " + std::to_string(pid) + ": " + base::errno_text(errno));
  }
  return t;
}

Target Target::launch_held(const std::string& exe_path, const std::vector<std::string>& argv,
                           bool stdout_to_stderr, uint64_t ignore, bool traceable) {
  int hold[2], err[2];
  if (pipe2(hold, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0)
    throw TargetError(std::string("pipe: ") + base::errno_text(errno));
  std::vector<char*> cargv;
  cargv.reserve(argv.size() + 1);
  for (auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);

  sigset_t current;
  sigprocmask(SIG_SETMASK, nullptr, &current);

  pid_t pid = fork();
  if (pid < 0) throw TargetError(std::string("fork: ") + base::errno_text(errno));
  if (pid == 0) {
    // Child: only async-signal-safe calls from here on.
    close(hold[1]);
    close(err[0]);
    // atrace run with file capabilities is not dumpable, nor is this fork
    // of it: atrace could not follow it through exec (exec_follow.h). The
    // exec sets the program's own dumpability.
    if (traceable) prctl(PR_SET_DUMPABLE, 1);
    char go = 0;
    ssize_t n;
    do n = read(hold[0], &go, 1);
    while (n < 0 && errno == EINTR);
    if (n != 1) _exit(127);  // atrace went away before releasing us
    // atrace ignores SIGPIPE for its own writes; the target gets what
    // atrace inherited, ignored signals included (stop_signals.h).
    signal(SIGPIPE, SIG_DFL);
    ignore_signals(ignore);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    if (stdout_to_stderr) dup2(STDERR_FILENO, STDOUT_FILENO);
    execv(exe_path.c_str(), cargv.data());
    int e = errno;
    (void)!write(err[1], &e, sizeof e);
    _exit(127);
  }
  close(hold[0]);
  close(err[1]);
  Target t;
  t.pid_ = pid;
  t.launched_ = true;
  t.go_.reset(hold[1]);
  t.err_.reset(err[0]);
  t.argv_ = argv;
  t.pidfd_.reset(pidfd_open(pid));
  if (!t.pidfd_) throw TargetError(std::string("pidfd_open: ") + base::errno_text(errno));
  return t;
}

void Target::release() {
  if (!launched_ || !go_) return;
  char go = 1;
  if (write(go_.get(), &go, 1) != 1)
    throw TargetError(std::string("cannot start the command: ") + base::errno_text(errno));
  go_.reset();
  // The error pipe closes on a successful exec; a failed one sends errno.
  int e = 0;
  ssize_t n;
  do n = read(err_.get(), &e, sizeof e);
  while (n < 0 && errno == EINTR);
  err_.reset();
  if (n == sizeof e) {
    wait_exit();
    throw TargetError("cannot execute " + argv_[0] + ": " + base::errno_text(e));
  }
}

bool Target::exited() const {
  if (reaped_) return true;
  struct pollfd p = {pidfd_.get(), POLLIN, 0};
  return poll(&p, 1, 0) == 1;
}

int Target::wait_exit() {
  if (!launched_) return 0;
  if (reaped_) return status_;
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
  status_ = shell_status(status);
  return status_;
}

void Target::reaped(int wait_status) {
  reaped_ = true;
  status_ = shell_status(wait_status);
}

std::string Target::command_line() const {
  if (!argv_.empty()) {
    std::ostringstream s;
    for (size_t i = 0; i < argv_.size(); ++i) s << (i ? " " : "") << argv_[i];
    return s.str();
  }
  std::string raw =
      base::read_whole_file("/proc/" + std::to_string(pid_) + "/cmdline").value_or("");
  while (!raw.empty() && raw.back() == '\0') raw.pop_back();
  for (auto& c : raw)
    if (c == '\0') c = ' ';
  return raw;
}

Target& Target::operator=(Target&& o) noexcept {
  if (this == &o) return *this;
  pid_ = std::exchange(o.pid_, -1);
  launched_ = std::exchange(o.launched_, false);
  reaped_ = o.reaped_;
  status_ = o.status_;
  pidfd_ = std::move(o.pidfd_);
  go_ = std::move(o.go_);
  err_ = std::move(o.err_);
  argv_ = std::move(o.argv_);
  return *this;
}

Target::~Target() {
  if (launched_ && !reaped_ && pid_ > 0) {
    if (go_) {
      // Never released: closing the hold pipe makes the child exit unrun.
      go_.reset();
    }
    wait_exit();
  }
}

}  // namespace atrace
