// A program fed on stdin in stages, for tests that attach to a process
// while it waits for input (tests/integration/test_fastpath_corpus.cpp):
// stdin is a pipe the test writes, stdout and stderr go to files. Between
// stages the test waits until the program has taken everything written and
// is blocked reading stdin again: then it is idle and attachable, and the
// work of the stage is finished.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tests/integration/run.h"

namespace atrace::it {

class FedProcess {
 public:
  // Starts `argv` in a process group of its own, stdout and stderr to
  // `out_path` and `err_path` (created or truncated).
  FedProcess(const std::vector<std::string>& argv, const std::string& out_path,
             const std::string& err_path);
  ~FedProcess();  // kills and reaps the group when still running
  FedProcess(const FedProcess&) = delete;
  FedProcess& operator=(const FedProcess&) = delete;

  pid_t pid() const { return pid_; }
  // Writes all of `bytes` to the program's stdin; false when it is gone.
  bool feed(const std::string& bytes);
  // True once the pipe is empty and the main thread waits in read(0, ...)
  // (or in poll/select);
  // false after the timeout or when the program ended.
  bool wait_idle(milliseconds timeout);
  // True while the process has not exited (reaps it when it has).
  bool running();
  void signal(int sig);
  // Closes stdin and waits for the end (killing the group after the
  // timeout); out and err are the files' contents.
  Result finish(milliseconds timeout);
  // What the files hold now.
  std::string out() const;
  std::string err() const;

 private:
  std::vector<std::string> argv_;
  std::string out_path_, err_path_;
  pid_t pid_ = -1;
  int in_fd_ = -1;
  bool reaped_ = false;
  int status_ = 0;
};

// The bytes of every executable mapping of a file in process `pid`, keyed
// "START-END PATH". Two snapshots are equal when no code of the program's
// files was left changed (the fast path's own regions are anonymous).
std::map<std::string, std::vector<std::uint8_t>> code_snapshot(pid_t pid);
// "" when every mapping of `before` is in `after` with the same bytes;
// otherwise which differ and where. Mappings new in `after` (a module the
// program loaded since) are not compared.
std::string code_difference(const std::map<std::string, std::vector<std::uint8_t>>& before,
                            const std::map<std::string, std::vector<std::uint8_t>>& after);

}  // namespace atrace::it
