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
#include <pthread.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "target_common.h"

// calls[i], returns[i] of function i. The traced functions are global, so
// reports name them plainly ("thrower(int)").
enum Fn { kThrower, kMid, kCatchTop, kDeep, kRethrower, kOuterCatch, kNested, kWithCleaner,
          kDriver, kLevel, kNfn };
const char* const kNames[kNfn] = {"thrower", "mid", "catch_top", "deep", "rethrower",
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
#define RETURN(f, v) \
  do {               \
    auto r_ = (v);   \
    returns[f] = returns[f] + 1; \
    return r_;       \
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

int main(int argc, char** argv) {
  target_line_buffered();
  const char* mode = argc > 1 ? argv[1] : "throw";
  if (!std::strcmp(mode, "throw")) {
    long rounds = target_count_arg(argc, argv, 1, 30);
    std::printf("sum=%ld\n", driver(static_cast<int>(rounds)));
  } else if (!std::strcmp(mode, "cancel") || !std::strcmp(mode, "exit")) {
    if (forced(!std::strcmp(mode, "exit")) != 0) return 1;
  } else {
    std::fprintf(stderr, "usage: %s throw [N] | cancel | exit\n", argv[0]);
    return 2;
  }
  std::printf("guards=%ld dtor_caught=%ld rethrown=%ld\n", guards, dtor_caught, rethrown);
  for (int f = 0; f < kNfn; f++)
    if (calls[f]) std::printf("%s calls=%ld unwound=%ld\n", kNames[f], calls[f], calls[f] - returns[f]);
  std::fflush(stdout);
  return target_exit_code(argc, argv);
}
