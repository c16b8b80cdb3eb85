// C++ exceptions and forced unwinds through traced functions, with exact
// counts (issue 14): every traced function counts its calls and how many of
// them ended by an unwind (entered minus returned), and prints both, so a
// test can compare the report's calls/unwound with the truth and the whole
// output with an untraced run.
//
//   target_exceptions throw N   N rounds of: thrown and caught 2 and 3 frames
//                               up, through a destructor (cleanup + resume),
//                               recursion, rethrow, nested try, a throw
//                               caught inside a destructor during unwinding
//   target_exceptions cancel    a thread cancelled 4 traced frames deep
//   target_exceptions exit      a thread calling pthread_exit 4 traced frames deep
//   target_exceptions hold WAIT GO
//                               calls that are open when the recording stops
//                               and unwind afterwards: four threads enter a
//                               traced frame each (spinning in user space,
//                               blocked in read, blocked in epoll_wait,
//                               blocked in a read that never ends); "ready";
//                               then, at GO, the first two throw through
//                               their frame, the third calls pthread_exit
//                               in it, the fourth is cancelled in it.
//                               WAIT: "now", or "traced": first wait until
//                               a traced call has the kernel's trampoline
//                               as its return address (return probes on).
//                               GO: "untraced" (until a traced call no
//                               longer has it: the probes are gone), or a
//                               FIFO to read one byte from. A system call
//                               that fails (EINTR) says so on stdout.
#include <fcntl.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "target_common.h"

// calls[i], returns[i] of function i. The traced functions are global, so
// reports name them plainly ("thrower(int)").
enum Fn {
  kThrower,
  kMid,
  kCatchTop,
  kDeep,
  kRethrower,
  kOuterCatch,
  kNested,
  kWithCleaner,
  kDriver,
  kLevel,
  kNfn
};
const char* const kNames[kNfn] = {"thrower",     "mid",    "catch_top",    "deep",   "rethrower",
                                  "outer_catch", "nested", "with_cleaner", "driver", "level"};
volatile long calls[kNfn], returns[kNfn];
volatile long guards, dtor_caught, rethrown;

struct Error {
  int value;
};

struct Guard {
  ~Guard() { guards = guards + 1; }
};

#define ENTER(f) (calls[f] = calls[f] + 1)
#define RETURN(f, v)             \
  do {                           \
    auto r_ = (v);               \
    returns[f] = returns[f] + 1; \
    return r_;                   \
  } while (0)

TRACED int thrower(int x) {
  ENTER(kThrower);
  if (x % 3 == 0) throw Error{x};
  RETURN(kThrower, x);
}

TRACED int mid(int x) {
  ENTER(kMid);
  Guard g;  // a cleanup: the unwind stops here and resumes
  int v = thrower(x) + 1;
  RETURN(kMid, v);
}

TRACED int catch_top(int x) {
  ENTER(kCatchTop);
  try {
    int v = mid(x);
    RETURN(kCatchTop, v);
  } catch (const Error& e) {
    RETURN(kCatchTop, -e.value);
  }
}

TRACED int deep(int n, int x) {
  ENTER(kDeep);
  int v = n == 0 ? mid(x) : deep(n - 1, x) + 1;
  TARGET_BARRIER();
  RETURN(kDeep, v);
}

TRACED int rethrower(int x) {
  ENTER(kRethrower);
  try {
    int v = deep(2, x);
    RETURN(kRethrower, v);
  } catch (...) {
    rethrown = rethrown + 1;
    throw;
  }
}

TRACED int outer_catch(int x) {
  ENTER(kOuterCatch);
  try {
    int v = rethrower(x);
    RETURN(kOuterCatch, v);
  } catch (const Error& e) {
    RETURN(kOuterCatch, e.value * 10);
  }
}

TRACED int nested(int x) {
  ENTER(kNested);
  try {
    try {
      int v = thrower(x);
      RETURN(kNested, v);
    } catch (const Error& e) {
      throw std::runtime_error("inner " + std::to_string(e.value));
    }
  } catch (const std::runtime_error& e) {
    RETURN(kNested, static_cast<int>(std::strlen(e.what())));
  }
}

// Its destructor throws and catches while an exception unwinds through it.
struct Cleaner {
  ~Cleaner() {
    try {
      thrower(3);
    } catch (const Error&) {
      dtor_caught = dtor_caught + 1;
    }
  }
};

TRACED int with_cleaner(int x) {
  ENTER(kWithCleaner);
  Cleaner c;
  int v = thrower(x);
  RETURN(kWithCleaner, v);
}

TRACED long driver(int rounds) {
  ENTER(kDriver);
  long sum = 0;
  for (int i = 0; i < rounds; i++) {
    sum += catch_top(i);
    sum += outer_catch(i);
    sum += nested(i);
    try {
      sum += with_cleaner(i);
    } catch (const Error& e) {
      sum += 1000 + e.value;
    }
  }
  RETURN(kDriver, sum);
}

// ---- forced unwinds ----

volatile int reached, stop;

TRACED int level(int n, bool do_exit) {
  ENTER(kLevel);
  Guard g;
  if (n == 0) {
    reached = 1;
    if (do_exit) pthread_exit(reinterpret_cast<void*>(42));
    while (!stop) pause();  // a cancellation point
    RETURN(kLevel, 0);
  }
  int v = level(n - 1, do_exit) + 1;
  RETURN(kLevel, v);
}

void* thread_main(void* arg) {
  level(3, arg != nullptr);
  return nullptr;
}

int forced(bool do_exit) {
  pthread_t t;
  if (pthread_create(&t, nullptr, thread_main, do_exit ? &t : nullptr) != 0) return 1;
  if (!do_exit) {
    while (!reached) usleep(1000);
    pthread_cancel(t);
  }
  void* ret = nullptr;
  pthread_join(t, &ret);
  if (ret == PTHREAD_CANCELED) std::printf("thread cancelled\n");
  else std::printf("thread exited with %ld\n", reinterpret_cast<long>(ret));
  return 0;
}

// ---- calls open when the recording stops ----

// The kernel's uretprobe trampoline lives in the [uprobes] mapping; the
// fast path's return stub in an anonymous executable mapping atrace made
// (docs/fast-path.md). A return address of this program's own is in its
// file's text.
bool in_uprobes_area(const void* addr) {
  FILE* maps = std::fopen("/proc/self/maps", "r");
  if (!maps) return false;
  char line[512];
  bool in = false;
  const auto a = reinterpret_cast<uintptr_t>(addr);
  while (std::fgets(line, sizeof line, maps)) {
    unsigned long lo = 0, hi = 0, inode = 0;
    char perms[8] = "";
    int path_at = 0;
    if (std::sscanf(line, "%lx-%lx %7s %*x %*x:%*x %lu %n", &lo, &hi, perms, &inode, &path_at) < 4)
      continue;
    if (a < lo || a >= hi) continue;
    const char* path = line + path_at;
    in = std::strncmp(path, "[uprobes]", 9) == 0 || (inode == 0 && std::strchr(perms, 'x'));
    break;
  }
  std::fclose(maps);
  return in;
}

// True while this function gets a return probe.
TRACED bool return_probed() {
  bool probed = in_uprobes_area(__builtin_return_address(0));
  TARGET_BARRIER();
  return probed;
}

std::atomic<int> entered;
volatile int go_flag;
int read_pipe[2], epoll_pipe[2], never_pipe[2];

void say_failed(const char* what, long n) {
  if (n < 0) std::printf("%s: %s\n", what, std::strerror(errno));
  else std::printf("%s: returned %ld\n", what, n);
}

TRACED int spin_frame() {
  entered++;
  while (!go_flag) TARGET_BARRIER();
  throw Error{1};
}

TRACED int spin_catch() {
  try {
    return spin_frame();
  } catch (const Error& e) {
    return e.value;
  }
}

TRACED int read_frame() {
  entered++;
  char c;
  ssize_t n = read(read_pipe[0], &c, 1);
  if (n != 1) say_failed("read", n);
  throw Error{2};
}

TRACED int read_catch() {
  try {
    return read_frame();
  } catch (const Error& e) {
    return e.value;
  }
}

TRACED int epoll_frame(int ep) {
  entered++;
  struct epoll_event ev {};
  int n = epoll_wait(ep, &ev, 1, -1);
  if (n != 1) say_failed("epoll_wait", n);
  pthread_exit(reinterpret_cast<void*>(7));
}

TRACED int cancel_frame() {
  entered++;
  char c;
  ssize_t n = read(never_pipe[0], &c, 1);  // a cancellation point
  say_failed("read (never)", n);
  return 0;
}

void* spin_main(void*) { return reinterpret_cast<void*>(static_cast<long>(spin_catch())); }
void* read_main(void*) { return reinterpret_cast<void*>(static_cast<long>(read_catch())); }
void* epoll_main(void* ep) {
  return reinterpret_cast<void*>(static_cast<long>(epoll_frame(*static_cast<int*>(ep))));
}
void* cancel_main(void*) { return reinterpret_cast<void*>(static_cast<long>(cancel_frame())); }

void print_end(const char* name, pthread_t t) {
  void* ret = nullptr;
  pthread_join(t, &ret);
  if (ret == PTHREAD_CANCELED) std::printf("%s: cancelled\n", name);
  else std::printf("%s: ended with %ld\n", name, reinterpret_cast<long>(ret));
}

int hold(const char* wait, const char* go) {
  if (!std::strcmp(wait, "traced"))
    while (!return_probed()) usleep(2000);
  if (pipe(read_pipe) || pipe(epoll_pipe) || pipe(never_pipe)) return 1;
  int ep = epoll_create1(0);
  struct epoll_event ev {};
  ev.events = EPOLLIN;
  if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, epoll_pipe[0], &ev)) return 1;
  pthread_t ts[4];
  void* (*mains[4])(void*) = {spin_main, read_main, epoll_main, cancel_main};
  for (int i = 0; i < 4; i++)
    if (pthread_create(&ts[i], nullptr, mains[i], &ep)) return 1;
  while (entered.load() < 4) usleep(1000);
  std::printf("ready\n");
  if (!std::strcmp(go, "untraced")) {
    while (return_probed()) usleep(2000);
  } else {
    int fifo = open(go, O_RDONLY);
    char c;
    if (fifo < 0 || read(fifo, &c, 1) != 1) return 1;
    close(fifo);
  }
  go_flag = 1;
  if (write(read_pipe[1], "x", 1) != 1 || write(epoll_pipe[1], "x", 1) != 1) return 1;
  pthread_cancel(ts[3]);
  print_end("spin", ts[0]);
  print_end("read", ts[1]);
  print_end("epoll", ts[2]);
  print_end("cancel", ts[3]);
  return 0;
}

int main(int argc, char** argv) {
  target_line_buffered();
  const char* mode = argc > 1 ? argv[1] : "throw";
  if (!std::strcmp(mode, "throw")) {
    long rounds = target_count_arg(argc, argv, 1, 30);
    std::printf("sum=%ld\n", driver(static_cast<int>(rounds)));
  } else if (!std::strcmp(mode, "cancel") || !std::strcmp(mode, "exit")) {
    if (forced(!std::strcmp(mode, "exit")) != 0) return 1;
  } else if (!std::strcmp(mode, "hold") && argc > 3) {
    if (hold(argv[2], argv[3]) != 0) return 1;
    std::fflush(stdout);
    return target_exit_code(argc, argv);
  } else {
    std::fprintf(stderr, "usage: %s throw [N] | cancel | exit | hold now|traced untraced|FIFO\n",
                 argv[0]);
    return 2;
  }
  std::printf("guards=%ld dtor_caught=%ld rethrown=%ld\n", guards, dtor_caught, rethrown);
  for (int f = 0; f < kNfn; f++)
    if (calls[f])
      std::printf("%s calls=%ld unwound=%ld\n", kNames[f], calls[f], calls[f] - returns[f]);
  std::fflush(stdout);
  return target_exit_code(argc, argv);
}
