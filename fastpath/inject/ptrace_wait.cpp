#include "fastpath/inject/ptrace_wait.h"

#include <sched.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "fastpath/inject/inject_error.h"

namespace atrace::fastpath {

namespace {

// The state letter of /proc/PID/task/TID/stat ('Z' for a zombie), 0 when gone.
char thread_state(pid_t pid, pid_t tid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t paren = stat.rfind(')');
  if (paren == std::string::npos || paren + 2 >= stat.size()) return 0;
  return stat[paren + 2];
}

}  // namespace

pid_t parent_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("PPid:", 0) == 0) return static_cast<pid_t>(std::atoi(line.c_str() + 5));
  return 0;
}

std::optional<int> wait_traced(pid_t pid, pid_t tid, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (unsigned idle = 0;; ++idle) {
    // Looked at first, not consumed: the end of the whole process (its
    // leader's exit) belongs to its parent, which is atrace itself in
    // launch mode (record/target.h reaps it for the exit status).
    siginfo_t info{};
    if (waitid(P_PID, static_cast<id_t>(tid), &info,
               WEXITED | WSTOPPED | WNOHANG | WNOWAIT | __WALL) < 0) {
      if (errno == EINTR) continue;
      if (errno == ECHILD) return std::nullopt;
      throw InjectError(errno_message("waitid " + std::to_string(tid), errno));
    }
    if (info.si_pid != 0) {
      bool ended =
          info.si_code == CLD_EXITED || info.si_code == CLD_KILLED || info.si_code == CLD_DUMPED;
      if (ended && tid == pid) {
        // Left for its parent when that is atrace. Any other parent (a
        // fork child's, --follow-forks) would wait for it until atrace let
        // it go: the tracer's wait hands the exit to the real parent.
        if (parent_of(pid) != getpid()) {
          int status = 0;
          waitpid(tid, &status, __WALL | WNOHANG);
        }
        return std::nullopt;
      }
      int status = 0;
      pid_t r = waitpid(tid, &status, __WALL | WNOHANG);
      if (r > 0) return status;
      if (r < 0 && errno == ECHILD) return std::nullopt;
      continue;
    }
    // Stops come within microseconds: yield first, then sleep briefly.
    if (idle < 32) {
      sched_yield();
      continue;
    }
    if (idle % 64 == 0) {
      char state = thread_state(pid, tid);
      if (state == 0 || state == 'Z' || state == 'X') return std::nullopt;
      if (std::chrono::steady_clock::now() > deadline)
        throw InjectError("thread " + std::to_string(tid) + " of process " + std::to_string(pid) +
                          " did not stop within " + std::to_string(timeout.count()) +
                          " ms (state " + std::string(1, state) + ")");
    }
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

}  // namespace atrace::fastpath
