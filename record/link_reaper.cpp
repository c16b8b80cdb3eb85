#include "record/link_reaper.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
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

// Where this process's command line lies in its memory (/proc/self/stat's
// arg_start and arg_end, fields 48 and 49), to be overwritten by the
// helper: it must not look like atrace with the target's arguments (to
// `ps`, or to a test that waits for processes with those arguments).
struct ArgArea {
  char* start = nullptr;
  size_t size = 0;
};
ArgArea arg_area() {
  std::FILE* f = std::fopen("/proc/self/stat", "re");
  if (!f) return {};
  char buf[2048];
  const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  const char* p = std::strrchr(buf, ')');  // the name may hold anything
  if (!p) return {};
  unsigned long long start = 0, end = 0;
  int field = 2;
  for (const char* tok = p + 1; *tok; ++tok) {
    if (*tok != ' ') continue;
    ++field;
    if (field == 48) start = std::strtoull(tok + 1, nullptr, 10);
    if (field == 49) end = std::strtoull(tok + 1, nullptr, 10);
  }
  if (!start || end <= start) return {};
  return {reinterpret_cast<char*>(start), static_cast<size_t>(end - start)};
}

// The grandchild: only system calls from here (it was forked from a
// threaded process). Every fd that is not a link goes first (a pipe's
// reader must see its end with the recorder's), then, once the recorder
// has closed its copies (`wait_fd` at its end), the links, one by one.
[[noreturn]] void reap(std::vector<int> keep, int wait_fd, ArgArea args) {
  setsid();
  static const char kName[] = "atrace (closing its probes)";
  if (args.start && args.size >= sizeof kName) {
    std::memset(args.start, 0, args.size);
    std::memcpy(args.start, kName, sizeof kName);
  }
  prctl(PR_SET_NAME, "atrace-close", 0, 0, 0);
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
  const ArgArea args = arg_area();
  std::sort(keep.begin(), keep.end());
  // Forked twice, so that the helper is nobody's child to wait for (a
  // recorder inside a longer-lived process leaves no zombie).
  const pid_t child = fork();
  if (child < 0) return {};
  if (child == 0) {
    const pid_t helper = fork();
    if (helper == 0) reap(keep, ends[0], args);
    _exit(helper < 0 ? 1 : 0);
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return {};
  return reaper;
}

}  // namespace atrace
