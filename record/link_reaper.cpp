#include "record/link_reaper.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace atrace {

std::vector<int> bpf_link_fds() {
  std::vector<int> fds;
  DIR* d = opendir("/proc/self/fd");
  if (!d) return fds;
  const int own = dirfd(d);
  while (dirent* e = readdir(d)) {
    char* end = nullptr;
    const long fd = std::strtol(e->d_name, &end, 10);
    if (*end != '\0' || end == e->d_name || fd == own) continue;
    char target[64] = {};
    const std::string path = std::string("/proc/self/fd/") + e->d_name;
    const ssize_t n = readlink(path.c_str(), target, sizeof target - 1);
    // Perf-event links (--attach=perf) hold their program by the event.
    if (n > 0 && (std::strcmp(target, "anon_inode:bpf_link") == 0 ||
                  std::strcmp(target, "anon_inode:[perf_event]") == 0))
      fds.push_back(static_cast<int>(fd));
  }
  closedir(d);
  std::sort(fds.begin(), fds.end());
  return fds;
}

namespace {

// The grandchild: only system calls from here (it was forked from a
// threaded process). Every fd that is not a link goes first (a pipe's
// reader must see its end with the recorder's), then, once the recorder
// has closed its copies (`wait_fd` at its end), the links, one by one.
[[noreturn]] void reap(std::vector<int> keep, int wait_fd) {
  setsid();
  unsigned next = 0;
  for (int fd : keep) {
    if (static_cast<unsigned>(fd) > next)
      syscall(SYS_close_range, next, static_cast<unsigned>(fd) - 1, 0u);
    next = static_cast<unsigned>(fd) + 1;
  }
  syscall(SYS_close_range, next, ~0u, 0u);
  char c;
  while (read(wait_fd, &c, 1) != 0 && errno == EINTR) {
  }
  for (int fd : keep) close(fd);
  _exit(0);
}

}  // namespace

LinkReaper hand_links_to_reaper() {
  std::vector<int> keep = bpf_link_fds();
  if (keep.empty()) return {};
  int ends[2];
  if (pipe2(ends, O_CLOEXEC) != 0) return {};
  UniqueFd wait_end(ends[0]);
  LinkReaper reaper{UniqueFd(ends[1])};
  keep.push_back(ends[0]);
  std::sort(keep.begin(), keep.end());
  // Forked twice, so that the helper is nobody's child to wait for (a
  // recorder inside a longer-lived process leaves no zombie).
  const pid_t child = fork();
  if (child < 0) return {};
  if (child == 0) {
    const pid_t helper = fork();
    if (helper == 0) reap(keep, ends[0]);
    _exit(helper < 0 ? 1 : 0);
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return {};
  return reaper;
}

}  // namespace atrace
