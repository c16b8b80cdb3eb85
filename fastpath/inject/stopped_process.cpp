#include "fastpath/inject/stopped_process.h"

#include <dirent.h>
#include <sched.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "fastpath/inject/as_pointer.h"
#include "fastpath/inject/ptrace_wait.h"

namespace atrace::fastpath {

namespace {

using Clock = std::chrono::steady_clock;

// The kernel's restart codes (include/linux/errno.h, not exported): a
// system call interrupted by a stop leaves one in rax until the kernel
// restarts it on the way back to user space.
constexpr long kErestartSys = 512;
constexpr long kErestartNoIntr = 513;
constexpr long kErestartNoHand = 514;
constexpr long kErestartRestartBlock = 516;

long trace(__ptrace_request request, pid_t tid, unsigned long data = 0) {
  return ptrace(request, tid, nullptr, as_pointer(data));
}

std::string proc_path(pid_t pid, const std::string& rest) {
  return "/proc/" + std::to_string(pid) + "/" + rest;
}

std::vector<pid_t> list_threads(pid_t pid) {
  std::vector<pid_t> tids;
  DIR* dir = opendir(proc_path(pid, "task").c_str());
  if (!dir) throw ProcessGone("no process with pid " + std::to_string(pid));
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    tids.push_back(static_cast<pid_t>(std::strtol(e->d_name, nullptr, 10)));
  }
  closedir(dir);
  std::sort(tids.begin(), tids.end());
  return tids;
}

// The state letter of /proc/PID/task/TID/stat ('Z' for a zombie), 0 when gone.
char thread_state(pid_t pid, pid_t tid) {
  std::ifstream in(proc_path(pid, "task/" + std::to_string(tid) + "/stat"));
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t paren = stat.rfind(')');
  if (paren == std::string::npos || paren + 2 >= stat.size()) return 0;
  return stat[paren + 2];
}

pid_t tracer_of(pid_t pid) {
  std::ifstream in(proc_path(pid, "status"));
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("TracerPid:", 0) == 0) return static_cast<pid_t>(std::atoi(line.c_str() + 10));
  return 0;
}

std::string comm_of(pid_t pid) {
  std::ifstream in(proc_path(pid, "comm"));
  std::string comm;
  std::getline(in, comm);
  return comm;
}

// AlreadyTraced when someone is the tracer of `pid`.
void check_untraced(pid_t pid) {
  pid_t tracer = tracer_of(pid);
  if (tracer == 0) return;
  std::string head = "cannot stop process " + std::to_string(pid) + " to patch it: ";
  if (access(("/proc/self/task/" + std::to_string(tracer)).c_str(), F_OK) == 0)
    throw AlreadyTraced(head +
                        "atrace itself is its tracer (it follows the command's execs and forks): "
                        "stopped without its tracer (fastpath/inject/tracer.h)");
  const std::string comm = comm_of(tracer);
  if (comm == "atrace")
    throw AlreadyTraced(head + "another atrace (process " + std::to_string(tracer) +
                        ") follows it through its forks, and a process has one tracer");
  throw AlreadyTraced(head + "it is already traced by process " + std::to_string(tracer) + " (" +
                      comm + "); a process has one tracer: detach the debugger first");
}

bool is_stop_signal(int sig) {
  return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

// PTRACE_DETACH needs a stopped tracee: a thread seized but not stopped yet
// (an error cut the stop short) is waited for first; a thread killed while
// stopped is reaped (a traced thread that died waits for its tracer).
void detach(pid_t pid, pid_t tid) {
  if (trace(PTRACE_DETACH, tid) == 0) return;
  for (int tries = 0; tries < 16; ++tries) {
    std::optional<int> status;
    try {
      status = wait_traced(pid, tid, std::chrono::seconds(1));
    } catch (const InjectError&) {
      return;  // never stopped: nothing more to do from here
    }
    if (!status || WIFEXITED(*status) || WIFSIGNALED(*status)) return;
    if (!WIFSTOPPED(*status)) continue;
    int sig = (*status >> 16) == 0 ? WSTOPSIG(*status) : 0;
    if (trace(PTRACE_DETACH, tid, static_cast<unsigned long>(sig)) == 0) return;
  }
}

}  // namespace

// While the process is held, atrace's thread is all that can make it go
// on: the threads it interrupts need CPU time to reach their stop, and those
// it already detached compete with it for the CPU while it detaches the
// rest. Raising its priority meanwhile (root, or CAP_SYS_NICE; skipped
// otherwise) shortens the stop on a loaded machine.
StoppedProcess::Boost::Boost() : old_(getpriority(PRIO_PROCESS, 0)) {
  raised_ = setpriority(PRIO_PROCESS, 0, -20) == 0;
}

StoppedProcess::Boost::~Boost() {
  if (raised_) setpriority(PRIO_PROCESS, 0, old_);
}

bool StoppedThread::restarting_syscall() const {
  if (static_cast<long>(regs.orig_rax) < 0) return false;
  long rax = static_cast<long>(regs.rax);
  return rax == -kErestartSys || rax == -kErestartNoIntr || rax == -kErestartNoHand ||
         rax == -kErestartRestartBlock;
}

StoppedProcess::StoppedProcess(pid_t pid, Tracer* tracer)
    : pid_(pid), owner_(gettid()), tracer_(tracer) {
  if (pid <= 0) throw std::invalid_argument("StoppedProcess: bad pid");
  if (access(proc_path(pid, "task").c_str(), F_OK) != 0)
    throw ProcessGone("no process with pid " + std::to_string(pid));
  if (!tracer_) check_untraced(pid);
  stop_all();
}

StoppedProcess::StoppedProcess(pid_t pid, pid_t held, Tracer* tracer)
    : pid_(pid), owner_(gettid()), adopted_(held), tracer_(tracer) {
  if (pid <= 0 || held <= 0) throw std::invalid_argument("StoppedProcess: bad pid");
  stop_all();
}

StoppedProcess::~StoppedProcess() { release(); }

void StoppedProcess::check_thread() const {
  if (gettid() != owner_)
    throw std::logic_error("StoppedProcess used from a thread other than its tracer");
}

void StoppedProcess::stop_all() {
  boost_.emplace();
  threads_.clear();
  times_ = StopTimes{};
  start_ = Clock::now();
  held_ = true;  // from the first seize on, release() must detach
  std::set<pid_t> known;
  std::set<pid_t> gone;
  // A thread the caller handed over is seized and stopped already; a
  // later restop() seizes it as any other.
  if (const pid_t held = std::exchange(adopted_, 0)) {
    known.insert(held);
    threads_.push_back(StoppedThread{held, {}});
    if (tracer_) tracer_->adopted(held);
  }
  try {
    for (;;) {
      ++times_.rounds;
      std::vector<pid_t> taken;
      for (pid_t tid : list_threads(pid_)) {
        if (known.count(tid)) continue;
        known.insert(tid);
        if (!take_thread(tid)) continue;
        threads_.push_back(StoppedThread{tid, {}});
        taken.push_back(tid);
      }
      if (taken.empty()) break;
      for (pid_t tid : taken)
        if (wait_for_stop(tid) == Waited::Gone) gone.insert(tid);
    }
    std::erase_if(threads_, [&](const StoppedThread& t) { return gone.count(t.tid) != 0; });
    if (threads_.empty()) throw ProcessGone("process " + std::to_string(pid_) + " ended");
    for (StoppedThread& t : threads_) {
      refresh(t);
      restart_if_interrupted(t);
    }
  } catch (...) {
    release();
    throw;
  }
  times_.to_stop = Clock::now() - start_;
}

// Seizes `tid` and asks it to stop (PTRACE_INTERRUPT); with a tracer, it
// is the tracer's already (PTRACE_O_TRACECLONE): only asked, unless it is
// a thread no clone event made traced (one a library constructor started
// while the caller held the process with other options). False when it
// ended since the listing.
bool StoppedProcess::take_thread(pid_t tid) {
  if (tracer_ && trace(PTRACE_INTERRUPT, tid) == 0) return true;
  const unsigned long options = tracer_ ? tracer_->options() : 0;
  if (trace(PTRACE_SEIZE, tid, options) < 0) {
    int err = errno;
    if (err == ESRCH) return false;  // ended since the listing
    char state = thread_state(pid_, tid);
    if (state == 'Z' || state == 'X' || state == 0) return false;  // an exited leader
    if (!tracer_) check_untraced(pid_);
    throw InjectError(errno_message("cannot stop thread " + std::to_string(tid) + " of process " +
                                        std::to_string(pid_) + " (ptrace seize)",
                                    err));
  }
  if (tracer_) tracer_->adopted(tid);
  trace(PTRACE_INTERRUPT, tid);  // ESRCH: it ended, its wait says so
  return true;
}

// The next wait status of `tid`, as wait_traced() gives it. With a tracer,
// every traced process's statuses come through the one wait (a vfork
// child must be let go for its parent to reach its stop): another thread
// of this stop's is kept for its own wait, anything else is the tracer's.
std::optional<int> StoppedProcess::wait_thread(pid_t tid, std::chrono::milliseconds timeout) {
  if (!tracer_) return wait_traced(pid_, tid, timeout);
  if (auto it = early_.find(tid); it != early_.end()) {
    const int status = it->second;
    early_.erase(it);
    return status;
  }
  const auto deadline = Clock::now() + timeout;
  auto ours = [this](pid_t t) {
    return std::any_of(threads_.begin(), threads_.end(),
                       [t](const StoppedThread& s) { return s.tid == t; });
  };
  for (unsigned idle = 0;; ++idle) {
    int status = 0;
    const pid_t got = waitpid(-1, &status, __WALL | WNOHANG);
    if (got == tid) return status;
    if (got > 0) {
      if (ours(got)) early_[got] = status;
      else tracer_->other(got, status, pid_);
      idle = 0;
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return std::nullopt;  // ECHILD: nothing of atrace's left to wait for
    if (idle < 32) {
      sched_yield();
      continue;
    }
    if (idle % 64 == 0) {
      const char state = thread_state(pid_, tid);
      if (state == 0 || state == 'Z' || state == 'X') return std::nullopt;
      if (Clock::now() > deadline)
        throw InjectError("thread " + std::to_string(tid) + " of process " + std::to_string(pid_) +
                          " did not stop within " + std::to_string(timeout.count()) +
                          " ms (state " + std::string(1, state) + ")");
    }
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

// Waits for the interrupt stop of `tid`, passing on any signal it was
// about to take (see the header). With a tracer, the events on the way
// are noted there: a fork's child is followed, an exec or an end gives
// the thread up (the exec'd process is the tracer's to hold).
StoppedProcess::Waited StoppedProcess::wait_for_stop(pid_t tid) {
  for (;;) {
    std::optional<int> status = wait_thread(tid, std::chrono::seconds(5));
    if (!status) return Waited::Gone;
    const bool ended = WIFEXITED(*status) || WIFSIGNALED(*status);
    const int event = *status >> 16;
    if (tracer_ && (ended || event != 0)) tracer_->noted(tid, *status);
    if (ended) return Waited::Gone;
    if (!WIFSTOPPED(*status)) continue;
    if (event == PTRACE_EVENT_STOP) {
      if (tracer_ && is_stop_signal(WSTOPSIG(*status))) group_stopped_.insert(tid);
      return Waited::Stopped;
    }
    if (tracer_ && event == PTRACE_EVENT_EXEC) return Waited::Gone;
    // A signal-delivery-stop: deliver it as the kernel would have; the
    // pending interrupt stops the thread again before its next instruction.
    int sig = event == 0 ? WSTOPSIG(*status) : 0;
    if (sig != 0) ++times_.signals_passed;
    if (trace(PTRACE_CONT, tid, static_cast<unsigned long>(sig)) < 0 && errno == ESRCH)
      return Waited::Gone;
  }
}

// A few blocking calls fail with EINTR when their thread is stopped, even
// with no signal handler (signal(7), "Interruption of system calls ... by
// stop signals": epoll_wait, semop, sigtimedwait, a socket read with
// SO_RCVTIMEO ...), where the others get a restart code the kernel acts on.
// The program would see an EINTR it never sees untraced (an untraced
// target_exceptions printed "epoll_wait: Interrupted system call"), so the
// call is made to start again on release, as the kernel does for the
// others: rax back to the call's number, rip back over the 2-byte syscall
// instruction. A call with a timeout waits its whole timeout again. An
// EINTR of a real signal is never at this stop: that signal's delivery
// stop comes first and the thread then stops in its handler.
void StoppedProcess::restart_if_interrupted(StoppedThread& t) {
  if (static_cast<long>(t.regs.orig_rax) < 0 || static_cast<long>(t.regs.rax) != -EINTR) return;
  t.regs.rax = t.regs.orig_rax;
  t.regs.rip -= 2;
  if (trace(PTRACE_SETREGS, t.tid, reinterpret_cast<unsigned long>(&t.regs)) < 0)
    throw ProcessGone(
        errno_message("cannot write the registers of thread " + std::to_string(t.tid), errno));
  ++times_.calls_restarted;
}

StoppedThread& StoppedProcess::thread(pid_t tid) {
  for (StoppedThread& t : threads_)
    if (t.tid == tid) return t;
  throw InjectError("thread " + std::to_string(tid) + " is not a stopped thread of process " +
                    std::to_string(pid_));
}

void StoppedProcess::refresh(StoppedThread& t) {
  check_thread();
  if (trace(PTRACE_GETREGS, t.tid, reinterpret_cast<unsigned long>(&t.regs)) < 0)
    throw ProcessGone(
        errno_message("cannot read the registers of thread " + std::to_string(t.tid), errno));
}

namespace {

// Whether `t`'s next instruction enters the kernel, where it may wait (a
// lock another thread holds: the held threads cannot let it go): in a
// system call now (stopped inside it: it restarts when resumed), or at a
// `syscall` instruction. Not the kernel's own uretprobe and uprobe calls
// (the return trampoline's, x86-64 numbers 335 and 336), which never wait:
// a thread on its way back through the trampoline is stepped out of it.
bool at_system_call(const StoppedThread& t) {
  auto waits = [](uint64_t nr) { return nr != 335 && nr != 336; };
  if (static_cast<long>(t.regs.orig_rax) >= 0) return waits(t.regs.orig_rax);
  errno = 0;
  const long word = ptrace(PTRACE_PEEKTEXT, t.tid, as_pointer(t.regs.rip), nullptr);
  // Unreadable through ptrace: the kernel's own [uprobes] page (the return
  // trampoline), whose system call never waits.
  if (errno != 0) return false;
  return (word & 0xffff) == 0x050f && waits(t.regs.rax);
}

// A step's SIGTRAP still queued on `tid` (it stopped for an interrupt
// first): taken here, at its signal-delivery stop, where the thread stays
// held and a detach drops it. Let through, it would kill the program.
void take_step_trap(pid_t pid, pid_t tid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/status");
  bool pending = false;
  for (std::string line; std::getline(in, line);)
    if (line.rfind("SigPnd:", 0) == 0 || line.rfind("ShdPnd:", 0) == 0)
      pending |= (std::strtoull(line.c_str() + 7, nullptr, 16) >> (SIGTRAP - 1)) & 1;
  if (!pending || trace(PTRACE_CONT, tid, 0) < 0) return;
  wait_traced(pid, tid, std::chrono::milliseconds(1000));
}

}  // namespace

bool StoppedProcess::step(StoppedThread& t) {
  check_thread();
  if (at_system_call(t)) return false;
  int sig = 0;
  for (int i = 0; i < 8; ++i) {
    if (trace(PTRACE_SINGLESTEP, t.tid, static_cast<unsigned long>(sig)) < 0) return false;
    std::optional<int> stopped;
    try {
      stopped = wait_thread(t.tid, kStepWait);
    } catch (const InjectError&) {
      // Blocked: held again where it waits, not stepped.
      if (trace(PTRACE_INTERRUPT, t.tid, 0) < 0) return false;
      stopped = wait_thread(t.tid, std::chrono::milliseconds(1000));
      if (!stopped || !WIFSTOPPED(*stopped)) return false;
      if ((*stopped >> 16) == PTRACE_EVENT_STOP) take_step_trap(pid_, t.tid);
      refresh(t);
      return false;
    }
    if (!stopped) return false;
    const int status = *stopped;
    if (!WIFSTOPPED(status)) return false;  // it exited
    sig = WSTOPSIG(status);
    if (sig == SIGTRAP && (status >> 16) == 0) {
      refresh(t);
      return true;
    }
    if ((status >> 16) != 0) sig = 0;  // an event stop, no signal to give
  }
  refresh(t);
  return true;
}

void StoppedProcess::release() noexcept {
  if (!held_) return;
  held_ = false;
  {
    // Each detach wakes a thread, which would preempt atrace on its CPU
    // for a whole scheduler tick (4 ms at HZ=250) before the next detach:
    // the detach loop (system calls only, no waiting, microseconds) runs
    // as a real-time thread when allowed, so no woken thread preempts it.
    int policy = sched_getscheduler(0);
    sched_param old{};
    sched_getparam(0, &old);
    sched_param rt{};
    rt.sched_priority = 1;
    bool realtime = policy >= 0 && sched_setscheduler(0, SCHED_FIFO, &rt) == 0;
    auto detaching = Clock::now();
    if (tracer_) {
      // What was waited for a thread of this stop and not taken: the
      // tracer's now, as if this stop had not been.
      for (const auto& [tid, status] : std::exchange(early_, {})) tracer_->other(tid, status, pid_);
      for (const StoppedThread& t : threads_) let_go(t.tid);
      group_stopped_.clear();
    } else {
      for (const StoppedThread& t : threads_) detach(pid_, t.tid);
    }
    // Measured before atrace gives up its priority (the threads it woke
    // may then run first): from here on, every thread of the program runs.
    auto released = Clock::now();
    times_.detach = released - detaching;
    times_.held = released - start_;
    if (realtime) sched_setscheduler(0, policy, &old);
  }
  boost_.reset();
}

// With a tracer: the thread goes on traced, with the tracer's options;
// one that was in a group-stop goes back to it (PTRACE_LISTEN: it stays
// stopped until a SIGCONT, as untraced). Not stopped (an error cut the
// stop short before its wait): its interrupt stop comes later, to the
// tracer, which lets it go.
void StoppedProcess::let_go(pid_t tid) noexcept {
  trace(PTRACE_SETOPTIONS, tid, tracer_->options());
  if (group_stopped_.count(tid)) trace(PTRACE_LISTEN, tid);
  else trace(PTRACE_CONT, tid, 0);
}

void StoppedProcess::restop(std::chrono::microseconds run) {
  check_thread();
  release();
  std::this_thread::sleep_for(run);
  stop_all();
}

}  // namespace atrace::fastpath
