#include "record/exec_follow.h"

#include <poll.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <utility>

#include "base/diagnostics.h"
#include "base/unique_fd.h"
#include "fastpath/inject/as_pointer.h"
#include "fastpath/inject/ptrace_wait.h"
#include "record/stop_signals.h"
#include "record/target.h"

namespace atrace {

namespace {

long trace_request(__ptrace_request request, pid_t pid, unsigned long data = 0) {
  return ptrace(request, pid, nullptr, fastpath::as_pointer(data));
}

unsigned long event_message(pid_t pid) {
  unsigned long msg = 0;
  ptrace(PTRACE_GETEVENTMSG, pid, nullptr, &msg);
  return msg;
}

bool is_stop_signal(int sig) {
  return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

std::string exe_of(pid_t pid) {
  char buf[4096];
  ssize_t n = readlink(("/proc/" + std::to_string(pid) + "/exe").c_str(), buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

pid_t tgid_of(pid_t tid) {
  std::ifstream in("/proc/" + std::to_string(tid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("Tgid:", 0) == 0) return static_cast<pid_t>(std::stol(line.substr(5)));
  return tid;
}

}  // namespace

// SIGCHLD through a signalfd while the command runs: each ptrace stop and
// exit wakes the loop, as a stop signal does through its own fd. Only
// atrace's main thread exists then (the BPF session comes after).
class ChildSignals {
 public:
  ChildSignals() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGCHLD);
    sigset_t old;
    pthread_sigmask(SIG_BLOCK, &set_, &old);
    unblock_ = !sigismember(&old, SIGCHLD);
    fd_.reset(signalfd(-1, &set_, SFD_CLOEXEC | SFD_NONBLOCK));
    if (!fd_) throw TargetError(std::string("signalfd: ") + base::errno_text(errno));
  }
  ~ChildSignals() {
    if (unblock_) pthread_sigmask(SIG_UNBLOCK, &set_, nullptr);
  }
  ChildSignals(const ChildSignals&) = delete;
  ChildSignals& operator=(const ChildSignals&) = delete;
  int fd() const { return fd_.get(); }
  void drain() const {
    signalfd_siginfo si;
    while (read(fd_.get(), &si, sizeof si) == static_cast<ssize_t>(sizeof si)) {
    }
  }

 private:
  sigset_t set_;
  bool unblock_ = false;
  UniqueFd fd_;
};

void block_child_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

ExecFollower::ExecFollower(pid_t top, bool forks, bool die_with_atrace)
    : top_(top),
      forks_(forks),
      // Threads too (CLONE): an exec or a fork from any thread of a
      // followed process is seen.
      options_(PTRACE_O_TRACEEXEC | PTRACE_O_TRACECLONE |
               (forks ? PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK : 0) |
               (die_with_atrace ? PTRACE_O_EXITKILL : 0)) {
  if (trace_request(PTRACE_SEIZE, top, options_) != 0)
    throw TargetError(std::string("cannot follow the command through exec: ptrace: ") +
                      base::errno_text(errno));
  alive_.insert(top);
}

ExecFollower::~ExecFollower() { release(); }

std::optional<ExecMatch> ExecFollower::run(const std::function<bool(const ExecMatch&)>& matches,
                                           StopSignals& stop) {
  ChildSignals children;
  for (;;) {
    // What happened before the signalfd existed is collected here first.
    for (;;) {
      int status = 0;
      pid_t pid = waitpid(-1, &status, __WALL | WNOHANG);
      if (pid <= 0) break;
      if (auto m = on_event(pid, status, matches)) {
        stop_all();
        return m;
      }
    }
    if (alive_.empty()) return std::nullopt;
    struct pollfd p[2] = {{children.fd(), POLLIN, 0}, {stop.fd(), POLLIN, 0}};
    if (poll(p, 2, -1) < 0 && errno != EINTR)
      throw TargetError(std::string("poll: ") + base::errno_text(errno));
    if (p[1].revents & POLLIN)
      if (int sig = stop.take()) {
        interrupted_ = sig;
        return std::nullopt;
      }
    children.drain();
  }
}

std::optional<ExecMatch> ExecFollower::on_event(
    pid_t pid, int status, const std::function<bool(const ExecMatch&)>& matches) {
  if (WIFEXITED(status) || WIFSIGNALED(status)) {
    exited(pid, status);
    return std::nullopt;
  }
  if (!WIFSTOPPED(status)) return std::nullopt;
  const int sig = WSTOPSIG(status);
  const int event = status >> 16;
  auto go_on = [&](int with) {
    resume_.erase(pid);
    trace_request(PTRACE_CONT, pid, static_cast<unsigned long>(with));
  };
  // A new thread or child's first stop (it may come before its parent's
  // fork event). A new process may be taken first (on_fork()).
  if (fresh_.erase(pid) || !alive_.count(pid)) {
    alive_.insert(pid);
    if (on_fork_ && tgid_of(pid) == pid) {
      if (!stopping_) {
        if (on_fork_(pid)) return std::nullopt;
      } else if (fastpath::parent_of(pid) != stopping_) {
        resume_[pid] = 0;
        held_forks_.push_back(pid);
        return std::nullopt;
      }
    }
    go_on(0);
    return std::nullopt;
  }
  resume_[pid] = 0;  // stopped: release() knows it can let it go
  switch (event) {
    case PTRACE_EVENT_EXEC: {
      auto m = execd(pid);
      if (m && matches(*m)) return m;
      go_on(0);
      return std::nullopt;
    }
    case PTRACE_EVENT_FORK:
    case PTRACE_EVENT_VFORK:
    case PTRACE_EVENT_CLONE:
      add_child(pid);
      go_on(0);
      return std::nullopt;
    case PTRACE_EVENT_STOP:
      // A stop signal's group-stop: it stays stopped as it would untraced,
      // until a SIGCONT. Else an interruption of ours: on with it.
      if (is_stop_signal(sig)) {
        resume_.erase(pid);
        trace_request(PTRACE_LISTEN, pid);
      } else {
        go_on(0);
      }
      return std::nullopt;
    default:  // a signal for it, delivered as if it were not followed
      go_on(static_cast<unsigned long>(sig));
      return std::nullopt;
  }
}

void ExecFollower::exited(pid_t pid, int status) {
  alive_.erase(pid);
  fresh_.erase(pid);
  resume_.erase(pid);
  if (pid == top_) top_status_ = status;
}

// `pid` stopped just after an exec: the thread that exec'd, if not the
// leader, took the process's pid (the old one is gone); the program is
// noted. nullopt when the process is gone already.
std::optional<ExecMatch> ExecFollower::execd(pid_t pid) {
  const auto former = static_cast<pid_t>(event_message(pid));
  if (former != pid) exited(former, 0);
  const std::string exe = exe_of(pid);
  if (std::find(ran_.begin(), ran_.end(), exe) == ran_.end()) ran_.push_back(exe);
  if (exe.empty()) return std::nullopt;
  return ExecMatch{pid, exe};
}

// `pid` stopped at a fork, vfork or clone event: the new thread or process
// is followed, its first stop awaited (fresh_). Returns it when it is new.
pid_t ExecFollower::add_child(pid_t pid) {
  const auto child = static_cast<pid_t>(event_message(pid));
  if (child <= 0 || !alive_.insert(child).second) return 0;
  fresh_.insert(child);
  return child;
}

// Every followed process stopped where it is, each with the signal it was
// about to receive kept for its release.
void ExecFollower::stop_all() {
  std::set<pid_t> waiting = fresh_;
  for (pid_t p : alive_)
    if (!resume_.count(p) && trace_request(PTRACE_INTERRUPT, p) == 0) waiting.insert(p);
  while (!waiting.empty()) {
    int status = 0;
    pid_t pid = waitpid(-1, &status, __WALL);
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;  // none left to wait for
    }
    waiting.erase(pid);
    if (WIFEXITED(status) || WIFSIGNALED(status)) {
      exited(pid, status);
      continue;
    }
    if (!WIFSTOPPED(status)) continue;
    const int event = status >> 16;
    if (fresh_.erase(pid) || !alive_.count(pid)) {
      alive_.insert(pid);
      resume_[pid] = 0;
      continue;
    }
    if (event == PTRACE_EVENT_EXEC) {
      // Another process's exec, just before the match: its program must
      // be probed too before it runs (with --follow-forks), so it is held.
      if (auto m = execd(pid)) held_execs_.push_back(*m);
    }
    if (event == PTRACE_EVENT_FORK || event == PTRACE_EVENT_VFORK || event == PTRACE_EVENT_CLONE) {
      if (const pid_t child = add_child(pid)) waiting.insert(child);
    }
    // A signal-delivery stop keeps its signal; any other stop resumes
    // with none (a group-stop stays one after the detach).
    resume_[pid] = event == 0 ? WSTOPSIG(status) : 0;
  }
}

void ExecFollower::keep_following() {
  signals_ = std::make_unique<ChildSignals>();
  auto held = [this](pid_t pid) {
    return std::any_of(held_execs_.begin(), held_execs_.end(),
                       [pid](const ExecMatch& m) { return m.pid == pid; });
  };
  for (auto it = resume_.begin(); it != resume_.end();) {
    if (held(it->first)) {
      ++it;
      continue;
    }
    trace_request(PTRACE_CONT, it->first, static_cast<unsigned long>(it->second));
    it = resume_.erase(it);
  }
}

int ExecFollower::fd() const { return signals_ ? signals_->fd() : -1; }

void ExecFollower::handle_events(const std::function<bool(const ExecMatch&)>& on_exec) {
  if (released_ || !signals_) return;
  for (pid_t pid : std::exchange(held_forks_, {})) {
    if (!resume_.erase(pid)) continue;  // gone meanwhile
    if (!on_fork_(pid)) trace_request(PTRACE_CONT, pid);
  }
  for (const auto& m : std::exchange(held_execs_, {})) {
    if (on_exec(m)) continue;
    resume_.erase(m.pid);
    trace_request(PTRACE_CONT, m.pid, 0);
  }
  signals_->drain();
  // A match is an exec on_exec took: on_event() left it to it. Any other
  // goes on there.
  for (;;) {
    int status = 0;
    const pid_t pid = waitpid(-1, &status, __WALL | WNOHANG);
    if (pid <= 0) break;
    on_event(pid, status, on_exec);
  }
}

std::vector<pid_t> ExecFollower::processes() const {
  std::set<pid_t> tgids;
  for (pid_t p : alive_) tgids.insert(tgid_of(p));
  return {tgids.begin(), tgids.end()};
}

void ExecFollower::outlive_atrace() {
  options_ &= ~static_cast<unsigned long>(PTRACE_O_EXITKILL);
  for (const auto& [pid, sig] : resume_) trace_request(PTRACE_SETOPTIONS, pid, options_);
}

void ExecFollower::adopted(pid_t tid) {
  fresh_.erase(tid);
  resume_.erase(tid);
  alive_.insert(tid);
}

void ExecFollower::noted(pid_t tid, int status) {
  if (WIFEXITED(status) || WIFSIGNALED(status)) {
    exited(tid, status);
    return;
  }
  if (!WIFSTOPPED(status)) return;
  switch (status >> 16) {
    case PTRACE_EVENT_FORK:
    case PTRACE_EVENT_VFORK:
    case PTRACE_EVENT_CLONE: add_child(tid); break;
    case PTRACE_EVENT_EXEC:
      // Held for handle_events(), which probes the new program before it
      // runs; gone already: nothing to hold.
      if (auto m = execd(tid)) {
        resume_[m->pid] = 0;
        held_execs_.push_back(*m);
      } else {
        trace_request(PTRACE_CONT, tid);
      }
      break;
    case PTRACE_EVENT_STOP:
      if (fresh_.erase(tid) || !alive_.count(tid)) alive_.insert(tid);
      break;
    default: break;
  }
}

void ExecFollower::other(pid_t tid, int status, pid_t stopping) {
  stopping_ = stopping;
  const size_t held = held_forks_.size() + held_execs_.size();
  // Never a match: an exec is held for handle_events().
  if (auto m = on_event(tid, status, [](const ExecMatch&) { return true; }))
    held_execs_.push_back(*m);
  stopping_ = 0;
  // Its SIGCHLD may have been read already: one more, so that the next
  // look (fd() readable) comes at once.
  if (held_forks_.size() + held_execs_.size() > held) kill(getpid(), SIGCHLD);
}

void ExecFollower::hand_over(pid_t pid) {
  alive_.erase(pid);
  fresh_.erase(pid);
  resume_.erase(pid);
}

void ExecFollower::release() {
  if (released_) return;
  released_ = true;
  stop_all();
  for (pid_t p : alive_) {
    auto it = resume_.find(p);
    const unsigned long sig = it == resume_.end() ? 0 : static_cast<unsigned long>(it->second);
    // Killed while stopped: its end is reported here first; collected, so
    // that its parent can reap it.
    if (trace_request(PTRACE_DETACH, p, sig) != 0 && errno == ESRCH) {
      int status = 0;
      if (waitpid(p, &status, __WALL) == p && p == top_) top_status_ = status;
    }
  }
  alive_.clear();
  resume_.clear();
}

}  // namespace atrace
