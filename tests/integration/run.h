// Running programs from the integration tests: start a command with its
// stdout and stderr captured, read its output while it runs, signal it, wait
// for it with a timeout that kills a hung child (and its process group), and
// say how it ended.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace atrace::it {

using std::chrono::milliseconds;

// How a finished command ended and what it printed.
struct Result {
  std::vector<std::string> argv;
  int exit_code = -1;       // valid when term_signal == 0 and !timed_out
  int term_signal = 0;      // the signal that killed it, 0 if it exited
  bool timed_out = false;   // killed by us after the timeout
  std::string hang_report;  // on a timeout: each process's state and kernel stack
  std::string out;
  std::string err;
  milliseconds elapsed{0};

  bool exited(int code) const { return !timed_out && term_signal == 0 && exit_code == code; }
  bool failed_cleanly() const { return !timed_out && term_signal == 0 && exit_code > 0; }
  // Command, status, stdout and stderr: for assertion messages.
  std::string describe() const;
};

// A started child process. It runs in a process group of its own, so a
// timeout can kill whatever it started too; the destructor kills and reaps
// a child still running.
class Child {
 public:
  explicit Child(std::vector<std::string> argv);
  ~Child();
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }

  // Waits until stdout has a complete line starting with `prefix` that was
  // not returned before; returns it without the newline, or nullopt when the
  // timeout passed or stdout closed first.
  std::optional<std::string> wait_for_line(std::string_view prefix, milliseconds timeout);

  // Waits until stderr holds `text`; false when the timeout passed or
  // stderr closed first.
  bool wait_for_err(std::string_view text, milliseconds timeout);

  // True while the process has not exited (reaps it when it has).
  bool running();
  void signal(int sig);

  // Waits for the end, reading all output. When `timeout` (from now) passes,
  // the process group gets SIGKILL and the result says timed_out.
  Result wait(milliseconds timeout);

  // Everything read from stdout so far.
  const std::string& out() const { return out_; }

 private:
  void pump(int poll_ms);
  bool try_reap();

  std::vector<std::string> argv_;
  pid_t pid_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  std::string out_;
  std::string err_;
  size_t lines_seen_ = 0;  // offset in out_ up to which lines were handed out
  bool reaped_ = false;
  int status_ = 0;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point end_;
};

// Runs a command to its end (see Child::wait).
Result run(std::vector<std::string> argv, milliseconds timeout = milliseconds(60000));

// `t` times ATRACE_TEST_TIME_SCALE (default 1): how long to wait before
// giving up, longer under an emulated CPU (tests/kernels/run.sh). Every
// wait here is scaled already.
milliseconds scaled(milliseconds t);

// argv as a shell-like line, for messages.
std::string join_command(const std::vector<std::string>& argv);

}  // namespace atrace::it
