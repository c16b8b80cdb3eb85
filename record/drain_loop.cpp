#include "record/drain_loop.h"

#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "base/clock.h"
#include "base/diagnostics.h"
#include "base/unique_fd.h"
#include "record/record_error.h"
#include "record/stop_signals.h"

namespace atrace {

void run_until_stop(const DrainLoop& loop) {
  UniqueFd timer(timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC));
  struct itimerspec its {};
  its.it_interval.tv_nsec = static_cast<long>(loop.period_ns);
  its.it_value.tv_nsec = static_cast<long>(loop.period_ns);
  timerfd_settime(timer.get(), 0, &its, nullptr);

  UniqueFd ep(epoll_create1(EPOLL_CLOEXEC));
  auto watch = [&](int fd, uint64_t tag) {
    struct epoll_event e {};
    e.events = EPOLLIN;
    e.data.u64 = tag;
    epoll_ctl(ep.get(), EPOLL_CTL_ADD, fd, &e);
  };
  enum : uint64_t { kRings, kSignal, kTarget, kTimer, kChildren };
  watch(loop.rings_fd, kRings);
  watch(loop.stop->fd(), kSignal);
  watch(loop.target_fd, kTarget);
  watch(timer.get(), kTimer);
  if (loop.children_fd >= 0) watch(loop.children_fd, kChildren);

  bool stop = false;
  while (!stop) {
    struct epoll_event evs[5];
    int n = epoll_wait(ep.get(), evs, 5, -1);
    if (n < 0 && errno != EINTR)
      throw RecordError(std::string("epoll: ") + base::errno_text(errno));
    for (int i = 0; i < n; ++i) {
      switch (evs[i].data.u64) {
        case kSignal: stop = loop.stop->take() != 0; break;
        case kTarget:
          // The other processes may outlive the first one. Its pidfd stays
          // readable: out of the set, or every wait would return at once.
          if (!loop.several) stop = true;
          epoll_ctl(ep.get(), EPOLL_CTL_DEL, loop.target_fd, nullptr);
          break;
        case kTimer: {
          uint64_t ticks;
          (void)!read(timer.get(), &ticks, sizeof ticks);
          break;
        }
        case kChildren: loop.on_children(); break;
        default: break;
      }
    }
    const uint64_t now = now_ns(CLOCK_MONOTONIC);
    if (now >= loop.deadline_ns) stop = true;
    if (loop.several && !loop.processes_left()) stop = true;
    if (loop.on_wake(now)) stop = true;
  }
}

}  // namespace atrace
