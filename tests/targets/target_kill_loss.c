/* target_kill_loss: calls kl_call(seq), seq = 0, 1, 2, ..., RATE times a
 * second, and logs each call's sequence number and the CLOCK_MONOTONIC time
 * read just before it. That log is the truth the KillLoss tests
 * (tests/integration/test_kill_loss.cpp) hold the file of a SIGKILLed
 * recorder against: every call older than the kill by the stated bound must
 * be in it.
 *
 * usage: target_kill_loss RATE LOG [--quiet] [--tag=X]
 *   prints "pid=N" and "kl_call=0xADDR"; with --quiet it then sends its
 *   stdout and stderr to /dev/null (launched by atrace, it must not hold
 *   atrace's pipes once atrace is killed). Calls until SIGTERM (or 60 s),
 *   then writes LOG: records of two native uint64 {seq, mono_ns}; exit 0. */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "target_common.h"

static volatile sig_atomic_t stop;
static volatile uint64_t sink;

static void on_term(int sig) {
  (void)sig;
  stop = 1;
}

TRACED void kl_call(uint64_t seq) {
  sink += seq;
  TARGET_BARRIER();
}

static uint64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_ns(uint64_t ns) {
  struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
  nanosleep(&ts, NULL);
}

int main(int argc, char** argv) {
  target_line_buffered();
  const long rate = target_count_arg(argc, argv, 0, 0);
  const char* log_path = NULL;
  int quiet = 0, seen = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--quiet") == 0) quiet = 1;
    else if (strncmp(argv[i], "--", 2) != 0 && seen++ == 1) log_path = argv[i];
  }
  if (rate <= 0 || !log_path) {
    fprintf(stderr, "usage: %s RATE LOG [--quiet] [--tag=X]\n", argv[0]);
    return 2;
  }
  FILE* log = fopen(log_path, "wb");
  if (!log) {
    perror(log_path);
    return 1;
  }
  static char buf[1 << 20];
  setvbuf(log, buf, _IOFBF, sizeof buf);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_term;
  sigaction(SIGTERM, &sa, NULL);
  printf("pid=%d\nkl_call=%p\n", (int)getpid(), (void*)kl_call);
  if (quiet) {
    int null = open("/dev/null", O_WRONLY);
    fflush(stdout);
    dup2(null, STDOUT_FILENO);
    dup2(null, STDERR_FILENO);
    close(null);
  }

  const uint64_t period = 1000000000ull / (uint64_t)rate;
  const uint64_t start = mono_ns(), end = start + 60ull * 1000000000ull;
  uint64_t next = start;
  for (uint64_t seq = 0; !stop;) {
    uint64_t now = mono_ns();
    if (now >= end) break;
    if (now < next) {
      /* Long waits sleep; the last 200 us are spun, so that a high rate
       * keeps its pace. */
      if (next - now > 200000) sleep_ns(next - now - 200000);
      continue;
    }
    const uint64_t rec[2] = {seq, now};
    fwrite(rec, sizeof rec, 1, log);
    kl_call(seq++);
    next += period;
    if (now > next + 100000000ull) next = now; /* fell behind: no burst */
  }
  return fclose(log) == 0 ? 0 : 1;
}
