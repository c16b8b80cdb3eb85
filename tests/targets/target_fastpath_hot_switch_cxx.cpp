// target_fastpath_hot_switch_cxx: the C++ counterpart of
// target_fastpath_hot_switch.c (libstdc++ and libgcc_s's unwinder mapped)
// for `record -p PID --fast-path=hot` (tests/integration/
// test_fastpath_hot_switch.cpp). Two threads each run rounds of
//   middle(r, n)    n calls of hot(i) (n/2 + 1 on even rounds, where
//                   hot(-501) throws: through hot's frame, patched once
//                   switched, and middle's, on the kernel's probes, to the
//                   round's catch)
//   tail_to_hot(x)  twice, a `jmp hot` (a kernel-probed function that
//                   tail-calls hot: its return address is the kernel's
//                   uretprobe trampoline); the first throws through both
// with n = 100 and a 10 ms pause until hot()'s entry holds the fast path's
// jump (0xe9), then 200 rounds more with n = 1,000. Before anything it keeps copies of hot()'s and
// _Unwind_RaiseException's first bytes and waits for atrace's kernel probe
// on hot() (an int3) and the test's argv[1]/go (atrace done attaching). It prints what it computed
// (the same untraced), writes the calls it made (hot, middle, tail_to_hot) into argv[1]/count,
// creates argv[1]/done and waits until both entries hold their first bytes
// again ("restored same") or 30 s ("restored differs"). With argv[1] = "-"
// it runs 3 rounds a thread at once and prints the lines a traced run
// prints before "restored". With argv[2] = "launched" (`record
// --fast-path=hot -- PROG DIR launched`: the probes are on from the exec,
// the first bytes never seen without them) it exits after `done`.
#include <dlfcn.h>
#include <time.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

namespace {

constexpr int kEntryBytes = 16;
constexpr int kThreads = 2;

struct Boom {
  long v;
};

bool has_byte(const volatile unsigned char* p, unsigned char b) {
  for (int i = 0; i < kEntryBytes; i++)
    if (p[i] == b) return true;
  return false;
}

void sleep_ms(int ms) {
  timespec ts{ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, nullptr);
}

}  // namespace

extern "C" {

__attribute__((noinline)) void throw_it(long x) { throw Boom{x}; }

__attribute__((noinline)) long hot(long x, long* calls) {
  ++*calls;
  if (__builtin_expect(x < 0, 0)) throw_it(x);
  return x * 7 + 3;
}

__attribute__((noinline)) long middle(long r, long n, long* calls) {
  long sum = 0;
  for (long i = 0; i < n; i++) sum += hot(i == n / 2 && r % 2 == 0 ? -501 : i, calls);
  return sum;
}

long tail_to_hot(long x, long* calls);

}  // extern "C"

// A tail call the compiler would not make (-fno-optimize-sibling-calls).
asm(R"(
  .text
  .globl tail_to_hot
  .type tail_to_hot, @function
tail_to_hot:
  jmp hot
  .size tail_to_hot, .-tail_to_hot
)");

// The throwing calls one frame down: the frames a throw leaves lie below
// the round's last call, whose entry ends them for the kernel's probes (an
// entry ends the frames under its own stack slot only; until then they are
// in flight, and the switch waits for no call of hot()'s group in flight).
__attribute__((noinline)) long via_tail(long x, long* calls) {
  const long v = tail_to_hot(x, calls);
  __asm__ volatile("");
  return v;
}

__attribute__((noinline)) long via_middle(long r, long n, long* calls) {
  const long v = middle(r, n, calls);
  __asm__ volatile("");
  return v;
}

namespace {

struct Counts {
  long hot = 0, middle = 0, tail = 0;
};

// The last call's entry ends, for the kernel's probes, the frames the throws
// left (their calls are in flight for the relevance filter until then: the
// switch waits for none).
long one_round(long r, long n, Counts& c) {
  long sum = 0;
  try {
    c.middle++;
    sum += via_middle(r, n, &c.hot);
  } catch (const Boom& b) {
    sum += b.v;
  }
  c.tail += 2;
  try {
    sum += via_tail(-1 - r % 3, &c.hot);
  } catch (const Boom& b) {
    sum += b.v * 1000;
  }
  sum += tail_to_hot(r % 3, &c.hot);
  return sum;
}

// Rounds of 100 calls with a pause until the switch (both threads are
// rarely in hot() at once: the switch needs a stop with no call of it in
// flight), of 1,000 without after.
constexpr long kSmall = 100, kBig = 1000;

struct Worker {
  // Rounds 0-5 of each size: the sums every later round repeats (r % 6).
  long first[2][6] = {};
  bool same = true;
  Counts counts;
};

void work(Worker& w, bool traced, const volatile unsigned char* code) {
  long r = 0;
  for (; r < 6; r++) w.first[0][r] = one_round(r, kSmall, w.counts);
  for (; r < 12; r++) w.first[1][r % 6] = one_round(r, kBig, w.counts);
  auto round = [&](int big) {
    w.same &= one_round(r, big ? kBig : kSmall, w.counts) == w.first[big][r % 6];
    r++;
  };
  if (!traced) {
    for (int i = 0; i < 3; i++) round(0), round(1);
    return;
  }
  // Until patched (60 s at most), then 200 rounds on the fast path.
  for (int i = 0; i < 30000 && code[0] != 0xe9; i++) {
    round(0);
    sleep_ms(10);
  }
  for (int i = 0; i < 200; i++) round(1);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const bool traced = std::strcmp(argv[1], "-") != 0;
  // volatile: read anew each time (atrace changes these bytes).
  const auto* code = reinterpret_cast<const volatile unsigned char*>(&hot);
  const auto* unwinder =
      static_cast<const volatile unsigned char*>(dlsym(RTLD_DEFAULT, "_Unwind_RaiseException"));
  if (!unwinder) return 3;
  unsigned char original[kEntryBytes], original_unwinder[kEntryBytes];
  for (int i = 0; i < kEntryBytes; i++) original[i] = code[i], original_unwinder[i] = unwinder[i];
  if (traced) {
    for (int i = 0; i < 60000 && !has_byte(code, 0xcc); i++) sleep_ms(1);
    if (!has_byte(code, 0xcc)) {
      std::printf("never probed\n");
      return 1;
    }
    // The int3 may be a return probe's, whose entry probe is not on yet:
    // the test says when atrace is done attaching (argv[1]/go). Launched,
    // every probe was on before the exec.
    const bool launched = argc > 2 && std::strcmp(argv[2], "launched") == 0;
    const std::string go = std::string(argv[1]) + "/go";
    bool told = launched;
    for (int i = 0; i < 60000 && !(told = told || std::ifstream(go).good()); i++) sleep_ms(1);
    if (!told) {
      std::printf("never told to go\n");
      return 1;
    }
  }
  Worker workers[kThreads];
  std::thread threads[kThreads];
  for (int t = 0; t < kThreads; t++)
    threads[t] = std::thread(work, std::ref(workers[t]), traced, code);
  for (auto& t : threads) t.join();
  Counts total;
  for (int t = 0; t < kThreads; t++) {
    const Worker& w = workers[t];
    for (const long* f : w.first)
      std::printf("thread %d: round sums %ld %ld %ld %ld %ld %ld\n", t, f[0], f[1], f[2], f[3],
                  f[4], f[5]);
    std::printf("thread %d: every round the same: %s\n", t, w.same ? "yes" : "no");
    total.hot += w.counts.hot;
    total.middle += w.counts.middle;
    total.tail += w.counts.tail;
  }
  std::fflush(stdout);
  if (!traced) return 0;
  const std::string dir = argv[1];
  std::ofstream(dir + "/count") << total.hot << " " << total.middle << " " << total.tail << "\n";
  std::ofstream(dir + "/done").flush();
  if (argc > 2 && std::strcmp(argv[2], "launched") == 0) return 0;
  bool restored = false;
  for (int i = 0; i < 30000 && !restored; i++) {
    restored = true;
    for (int j = 0; j < kEntryBytes; j++)
      restored &= original[j] == code[j] && original_unwinder[j] == unwinder[j];
    if (!restored) sleep_ms(1);
  }
  std::printf("restored %s\n", restored ? "same" : "differs");
  return 0;
}
