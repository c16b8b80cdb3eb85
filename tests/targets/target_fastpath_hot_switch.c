// target_fastpath_hot_switch: a C program (no C++ unwinder mapped) for
// `record -p PID --fast-path=hot` (tests/integration/
// test_fastpath_hot_switch.cpp). Before anything it keeps a copy of hot()'s
// first bytes; it waits until atrace's kernel probe is on hot() (an int3 in
// them) and the test says atrace is done attaching (argv[1]/go), then:
//   other()     100 calls (a 200 us sleep each: kept by the filter)
//   hot(i)      rounds of 1,000 calls until its entry holds the fast path's
//               jump (0xe9: the filter decided, atrace patched it instead),
//               then 200 rounds more
//   other()     100 calls more
// It prints what it computed (each round's sum: the same untraced), writes
// how many hot() calls it made into argv[1]/count, creates argv[1]/done,
// and waits until hot()'s bytes are the ones it started with ("restored
// same") or 30 s ("restored differs"). With argv[1] = "-" it runs 3 rounds
// at once and prints the same lines as a traced run before "restored".
// With argv[2] = "launched" (`record --fast-path=hot -- PROG DIR launched`:
// the probe is on hot() from the exec, its first bytes never seen without
// it) it exits after `done`, its bytes not checked.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ENTRY_BYTES 16

__attribute__((noinline)) long hot(long x) {
  __asm__ volatile("");
  return x * 7 + 3;
}

__attribute__((noinline)) long other(long x) {
  struct timespec ts = {0, 200000};
  nanosleep(&ts, NULL);
  return x + 1;
}

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static int has_byte(const volatile unsigned char* p, unsigned char b) {
  for (int i = 0; i < ENTRY_BYTES; i++)
    if (p[i] == b) return 1;
  return 0;
}

static long round_sum(void) {
  long sum = 0;
  for (long i = 0; i < 1000; i++) sum += hot(i);
  return sum;
}

// Whether argv[1]/go appeared within 60 s.
static int wait_for_go(const char* dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/go", dir);
  for (int i = 0; i < 60000; i++) {
    if (access(path, F_OK) == 0) return 1;
    sleep_ms(1);
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const int traced = strcmp(argv[1], "-") != 0;
  // volatile: read anew each time (atrace changes these bytes).
  const volatile unsigned char* code = (const volatile unsigned char*)hot;
  unsigned char original[ENTRY_BYTES];
  for (int i = 0; i < ENTRY_BYTES; i++) original[i] = code[i];
  const int launched = argc > 2 && strcmp(argv[2], "launched") == 0;
  if (traced) {
    // atrace's kernel probe on hot(): an int3 in its first bytes.
    for (int i = 0; i < 60000 && !has_byte(code, 0xcc); i++) sleep_ms(1);
    if (!has_byte(code, 0xcc)) {
      printf("never probed\n");
      return 1;
    }
    // The int3 may be a return probe's, whose entry probe is not on yet:
    // the test says when atrace is done attaching (argv[1]/go). Launched,
    // every probe was on before the exec.
    if (!launched && !wait_for_go(argv[1])) {
      printf("never told to go\n");
      return 1;
    }
  }
  long others = 0;
  for (long i = 0; i < 100; i++) others += other(i);
  const long first = round_sum();
  long calls = 1000, rounds = 1, same = 1;
  if (traced) {
    // Until patched (20 s at most), then 200 rounds on the fast path.
    for (int i = 0; i < 20000 && code[0] != 0xe9; i++, rounds++) same &= round_sum() == first;
    for (int i = 0; i < 200; i++, rounds++) same &= round_sum() == first;
  } else {
    for (int i = 0; i < 2; i++, rounds++) same &= round_sum() == first;
  }
  calls = rounds * 1000;
  for (long i = 0; i < 100; i++) others += other(i);
  printf("round sum %ld, every round the same: %s\n", first, same ? "yes" : "no");
  printf("other sum %ld\n", others);
  fflush(stdout);
  if (!traced) return 0;
  char path[4096];
  snprintf(path, sizeof path, "%s/count", argv[1]);
  FILE* f = fopen(path, "w");
  if (!f) return 1;
  fprintf(f, "%ld\n", calls);
  fclose(f);
  snprintf(path, sizeof path, "%s/done", argv[1]);
  f = fopen(path, "w");
  if (!f) return 1;
  fclose(f);
  if (launched) return 0;
  int restored = 0;
  for (int i = 0; i < 30000 && !restored; i++) {
    restored = 1;
    for (int j = 0; j < ENTRY_BYTES; j++) restored &= original[j] == code[j];
    if (!restored) sleep_ms(1);
  }
  printf("restored %s\n", restored ? "same" : "differs");
  return 0;
}
