// The fast path's safety corpus, C++ part (issue 35,
// tests/integration/test_fastpath_corpus.cpp): exceptions thrown and
// caught in threads, through traced frames with destructors, in a program
// that waits to be attached. It reads a line from stdin (the test attaches
// atrace meanwhile), runs 4 threads of ROUNDS rounds each, prints what it
// counted, reads another line (the test ends atrace), then exits.
//
//   target_fastpath_corpus_cpp ROUNDS
//     each round: catcher() calls middle(3), which recurses to thrower(),
//     which throws; each middle() frame has an object whose destructor
//     runs during the unwind; catcher() catches. Every 4th round
//     thrower() returns instead and nothing is thrown.
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#define TRACED __attribute__((noipa, used))

static std::atomic<long> destroyed{0};
static std::atomic<long> caught{0};

struct Guard {
  ~Guard() { destroyed++; }
};

TRACED long thrower(long round) {
  if (round % 4 == 3) return round;
  throw std::runtime_error("round");
}

TRACED long middle(long depth, long round) {
  Guard g;
  long r = depth == 0 ? thrower(round) : middle(depth - 1, round);
  asm volatile("" ::: "memory");  // not a tail call
  return r + 1;
}

TRACED long catcher(long round) {
  try {
    return middle(3, round);
  } catch (const std::exception& e) {
    caught++;
    return -1;
  }
}

static long rounds;

static void* worker(void*) {
  long sum = 0;
  for (long i = 0; i < rounds; i++) sum += catcher(i);
  return reinterpret_cast<void*>(sum);
}

static void wait_line() {
  char c;
  ssize_t n;
  while ((n = read(0, &c, 1)) == 1 && c != '\n') {
  }
  if (n < 0) {
    perror("read");
    exit(4);
  }
}

int main(int argc, char** argv) {
  rounds = argc > 1 ? atol(argv[1]) : 1000;
  wait_line();
  pthread_t t[4];
  for (auto& th : t) pthread_create(&th, nullptr, worker, nullptr);
  long sum = 0;
  for (auto& th : t) {
    void* r;
    pthread_join(th, &r);
    sum += reinterpret_cast<long>(r);
  }
  printf("sum=%ld caught=%ld destroyed=%ld\n", sum, caught.load(), destroyed.load());
  fflush(stdout);
  wait_line();
  return 0;
}
