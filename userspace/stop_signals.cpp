#include "userspace/stop_signals.h"

#include <poll.h>
#include <sys/signalfd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

#include "userspace/target.h"

namespace atrace {

namespace {

constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};

sigset_t stop_set() {
  sigset_t s;
  sigemptyset(&s);
  for (int sig : kStopSignals) sigaddset(&s, sig);
  return s;
}

}  // namespace

StopSignals::StopSignals() {
  const sigset_t set = stop_set();
  // Blocked first: from here no stop signal can kill atrace or be lost.
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  sigemptyset(&ignored_);
  for (int sig : kStopSignals) {
    struct sigaction old {};
    sigaction(sig, nullptr, &old);
    if (old.sa_handler == SIG_IGN) {
      sigaddset(&ignored_, sig);
      signal(sig, SIG_DFL);  // an ignored signal would never reach the signalfd
    }
  }
  fd_.reset(signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
  if (!fd_) throw std::runtime_error(std::string("signalfd: ") + std::strerror(errno));
}

int StopSignals::take() {
  struct signalfd_siginfo si {};
  ssize_t n;
  do n = read(fd_.get(), &si, sizeof si); while (n < 0 && errno == EINTR);
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
