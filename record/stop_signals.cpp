#include "record/stop_signals.h"

#include <poll.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "base/diagnostics.h"
#include "record/record_error.h"
#include "record/target.h"

namespace atrace {

namespace {

constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};

// The kernel's struct sigaction on x86-64 (rt_sigaction(2)).
struct KernelSigaction {
  void (*handler)(int);
  unsigned long flags;
  void (*restorer)();
  uint64_t mask;
};

sigset_t stop_set() {
  sigset_t s;
  sigemptyset(&s);
  for (int sig : kStopSignals) sigaddset(&s, sig);
  return s;
}

}  // namespace

bool signal_ignored(int sig) {
  KernelSigaction old{};
  return syscall(SYS_rt_sigaction, sig, nullptr, &old, sizeof old.mask) == 0 &&
         old.handler == SIG_IGN;
}

void ignore_signals(uint64_t mask) {
  KernelSigaction ign{};
  ign.handler = SIG_IGN;
  for (int sig = 1; sig <= 64; ++sig)
    if (mask & (1ull << (sig - 1))) syscall(SYS_rt_sigaction, sig, &ign, nullptr, sizeof ign.mask);
}

StopSignals::StopSignals() {
  const sigset_t set = stop_set();
  // Blocked first: from here no stop signal can kill atrace or be lost.
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  for (int sig = 1; sig <= 64; ++sig)
    if (sig != SIGKILL && sig != SIGSTOP && signal_ignored(sig)) ignored_ |= 1ull << (sig - 1);
  for (int sig : kStopSignals)
    if (ignored_ & (1ull << (sig - 1)))
      signal(sig, SIG_DFL);  // an ignored signal would never reach the signalfd
  fd_.reset(signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
  if (!fd_) throw RecordError(std::string("signalfd: ") + base::errno_text(errno));
}

int StopSignals::take() {
  struct signalfd_siginfo si {};
  ssize_t n;
  do n = read(fd_.get(), &si, sizeof si);
  while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(sizeof si) ? static_cast<int>(si.ssi_signo) : 0;
}

const char* stop_signal_name(int sig) {
  switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    default: return "a signal";
  }
}

int wait_passing_signals(Target& target, StopSignals& stop) {
  if (!target.launched()) return 0;
  while (!target.exited()) {
    struct pollfd p[2] = {{target.pidfd(), POLLIN, 0}, {stop.fd(), POLLIN, 0}};
    if (poll(p, 2, -1) < 0 && errno != EINTR) break;
    if (p[1].revents & POLLIN)
      if (int sig = stop.take(); sig && !target.exited()) kill(target.pid(), sig);
  }
  return target.wait_exit();
}

}  // namespace atrace
