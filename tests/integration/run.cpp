#include "tests/integration/run.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dirent.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "base/whole_file.h"
#include "tests/integration/probe_path.h"

namespace atrace::it {

// How long to wait before calling a child hung, times ATRACE_TEST_TIME_SCALE
// (a whole number, default 1): tests/kernels/run.sh sets it under QEMU's
// emulated CPU, where everything takes many times longer. Never a limit on
// how fast something must be: only when to give up.
milliseconds scaled(milliseconds t) {
  const char* s = std::getenv("ATRACE_TEST_TIME_SCALE");
  const long k = s ? std::strtol(s, nullptr, 10) : 1;
  return k > 1 ? t * k : t;
}

namespace {

using Clock = std::chrono::steady_clock;

// Appends what is readable on fd to buf; closes fd and sets it to -1 at EOF.
void drain(int& fd, std::string& buf) {
  char chunk[4096];
  for (;;) {
    ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n > 0) {
      buf.append(chunk, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    ::close(fd);  // EOF or a real error: nothing more will come
    fd = -1;
    return;
  }
}

}  // namespace

std::string join_command(const std::vector<std::string>& argv) {
  std::string line;
  for (const auto& a : argv) {
    if (!line.empty()) line += ' ';
    bool plain = !a.empty() && a.find_first_of(" \t'\"*?;&|<>()$\\") == std::string::npos;
    line += plain ? a : "'" + a + "'";
  }
  return line;
}

std::string Result::describe() const {
  std::string s = "command: " + join_command(argv) + "\nstatus: ";
  if (timed_out) s += "timed out (killed)";
  else if (term_signal != 0)
    s += "killed by signal " + std::to_string(term_signal) + " (" + strsignal(term_signal) + ")";
  else s += "exit " + std::to_string(exit_code);
  s += "\nstdout:\n" + out + "\nstderr:\n" + err + "\n";
  if (!hang_report.empty()) s += "processes at the timeout:\n" + hang_report;
  return s;
}

Child::Child(std::vector<std::string> argv) : argv_(with_probe_path(std::move(argv))) {
  if (argv_.empty()) throw std::invalid_argument("Child: empty command");
  // exec_sync's write end closes at the child's exec (or exit): the
  // constructor returns once the command runs, so a test that attaches to
  // pid() right away finds the command's image, not the test runner's.
  int out_pipe[2], err_pipe[2], exec_sync[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0 ||
      ::pipe2(exec_sync, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("pipe2: ") + std::strerror(errno));
  int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);

  // Everything the child needs is built before fork: after fork only
  // async-signal-safe calls are allowed (the test runner may have threads).
  std::vector<char*> args;
  for (auto& a : argv_) args.push_back(a.data());
  args.push_back(nullptr);
  std::string exec_failed = "exec " + argv_[0] + " failed\n";

  start_ = Clock::now();
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid_ == 0) {
    ::setpgid(0, 0);  // own group: a timeout kills all it started
    ::dup2(null_fd, 0);
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    // Default dispositions and no blocked signals, whatever the runner had.
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGPIPE, SIG_DFL);
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    ::execvp(args[0], args.data());
    ssize_t ignored = ::write(2, exec_failed.data(), exec_failed.size());
    (void)ignored;
    ::_exit(127);
  }
  ::setpgid(pid_, pid_);  // also from here: no race with a signal sent right away
  ::close(exec_sync[1]);
  char byte;
  while (::read(exec_sync[0], &byte, 1) < 0 && errno == EINTR) {
  }
  ::close(exec_sync[0]);
  ::close(null_fd);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  out_fd_ = out_pipe[0];
  err_fd_ = err_pipe[0];
  ::fcntl(out_fd_, F_SETFL, O_NONBLOCK);
  ::fcntl(err_fd_, F_SETFL, O_NONBLOCK);
}

Child::~Child() {
  if (!reaped_ && pid_ > 0) {
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &status_, 0);
  }
  if (out_fd_ >= 0) ::close(out_fd_);
  if (err_fd_ >= 0) ::close(err_fd_);
}

void Child::pump(int poll_ms) {
  pollfd fds[2];
  nfds_t n = 0;
  if (out_fd_ >= 0) fds[n++] = {out_fd_, POLLIN, 0};
  if (err_fd_ >= 0) fds[n++] = {err_fd_, POLLIN, 0};
  if (n == 0) {
    std::this_thread::sleep_for(milliseconds(poll_ms));
    return;
  }
  if (::poll(fds, n, poll_ms) <= 0) return;
  if (out_fd_ >= 0) drain(out_fd_, out_);
  if (err_fd_ >= 0) drain(err_fd_, err_);
}

bool Child::try_reap() {
  if (reaped_) return true;
  pid_t r = ::waitpid(pid_, &status_, WNOHANG);
  if (r == pid_) {
    reaped_ = true;
    end_ = Clock::now();
  }
  return reaped_;
}

bool Child::running() {
  pump(0);
  return !try_reap();
}

void Child::signal(int sig) {
  if (!reaped_) ::kill(pid_, sig);
}

std::optional<std::string> Child::wait_for_line(std::string_view prefix, milliseconds timeout) {
  auto deadline = Clock::now() + scaled(timeout);
  for (;;) {
    // Hand out complete lines only, each once.
    size_t nl;
    while ((nl = out_.find('\n', lines_seen_)) != std::string::npos) {
      std::string line = out_.substr(lines_seen_, nl - lines_seen_);
      lines_seen_ = nl + 1;
      if (line.compare(0, prefix.size(), prefix) == 0) return line;
    }
    if (out_fd_ < 0 || Clock::now() >= deadline) return std::nullopt;
    pump(20);
  }
}

bool Child::wait_for_err(std::string_view text, milliseconds timeout) {
  auto deadline = Clock::now() + scaled(timeout);
  for (;;) {
    if (err_.find(text) != std::string::npos) return true;
    if (err_fd_ < 0 || Clock::now() >= deadline) return false;
    pump(20);
  }
}

// What every process of a timed-out group was doing (state, kernel stack),
// so a hang in CI says where it hung instead of only that it did.
static std::string describe_stuck_group(pid_t pgid) {
  std::string out;
  DIR* proc = ::opendir("/proc");
  if (!proc) return out;
  while (struct dirent* d = ::readdir(proc)) {
    char* end = nullptr;
    long pid = std::strtol(d->d_name, &end, 10);
    if (pid <= 0 || *end) continue;
    std::string base = std::string("/proc/") + d->d_name;
    std::ifstream stat(base + "/stat");
    std::string line;
    std::getline(stat, line);
    auto close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    std::string state;
    long ppid = 0, pgrp = 0;
    rest >> state >> ppid >> pgrp;
    if (pgrp != pgid) continue;
    const std::string frames = atrace::base::read_whole_file(base + "/stack").value_or("");
    out.append("  ")
        .append(line, 0, close + 1)
        .append(" state ")
        .append(state)
        .append("\n")
        .append(frames);
  }
  ::closedir(proc);
  return out;
}

Result Child::wait(milliseconds timeout) {
  Result r;
  r.argv = argv_;
  // Counted from now: a long-running child (a target stopped late in its
  // test) still gets the whole timeout to end.
  auto deadline = Clock::now() + scaled(timeout);
  while (!try_reap()) {
    if (Clock::now() >= deadline) {
      r.hang_report = describe_stuck_group(pid_);
      ::kill(-pid_, SIGKILL);
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status_, 0);
      reaped_ = true;
      end_ = Clock::now();
      r.timed_out = true;
      break;
    }
    pump(20);
  }
  // Read what is left. Something the child started may still hold the pipes
  // open (a target left running is a bug the tests look for): stop after a
  // grace period instead of waiting for an EOF that may never come.
  auto grace_end = Clock::now() + milliseconds(1000);
  while ((out_fd_ >= 0 || err_fd_ >= 0) && Clock::now() < grace_end) pump(20);

  r.out = out_;
  r.err = err_;
  r.elapsed = std::chrono::duration_cast<milliseconds>(end_ - start_);
  if (!r.timed_out) {
    if (WIFEXITED(status_)) r.exit_code = WEXITSTATUS(status_);
    if (WIFSIGNALED(status_)) r.term_signal = WTERMSIG(status_);
  }
  return r;
}

Result run(std::vector<std::string> argv, milliseconds timeout) {
  Child child(std::move(argv));
  return child.wait(timeout);
}

}  // namespace atrace::it
