/* target_usdt: probes from include/atrace/probe.h fired a known number of
 * times with known arguments (USDT tests, issue 6).
 *
 *   target_usdt [N]          N rounds (default 100), then prints its counts:
 *     app:tick(i)              N times, i = 0..N-1
 *     app:request(path, code)  N times: "/index" with 200 for i % 5 < 3,
 *                              "/api/v1" with -1 otherwise
 *     app:six(1, -2, 3, -4, 5, i)   N times
 *     app:none                 N times, no arguments
 *     app:phase begin/end      3 intervals of 20 ms (usleep inside)
 *     libp:hit(k)              11 times, in libtarget_usdt_lib.so
 *   target_usdt --watch SEC  for SEC seconds, prints "enabled" / "disabled"
 *                            each time ATRACE_ENABLED(app, tick) changes
 *                            (first state included), fires app:tick(k) every
 *                            2 ms, and prints "ticks=K" at the end.
 */
#include <atrace/probe.h>
#include <time.h>
#include <unistd.h>

#include "target_common.h"
#include "target_usdt_lib.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int watch(double seconds) {
  int last = -1;
  long ticks = 0;
  double end = now_s() + seconds;
  while (now_s() < end) {
    int on = ATRACE_ENABLED(app, tick) ? 1 : 0;
    if (on != last) {
      printf("%s\n", on ? "enabled" : "disabled");
      fflush(stdout);
      last = on;
    }
    ATRACE_EVENT(app, tick, ticks);
    ticks++;
    usleep(2000);
  }
  printf("ticks=%ld\n", ticks);
  return 0;
}

int main(int argc, char** argv) {
  if (argc > 2 && strcmp(argv[1], "--watch") == 0) return watch(atof(argv[2]));
  long n = target_count_arg(argc, argv, 0, 100);
  long index = 0, api = 0;
  for (long i = 0; i < n; i++) {
    ATRACE_EVENT(app, tick, i);
    const char* path = i % 5 < 3 ? "/index" : "/api/v1";
    int code = i % 5 < 3 ? 200 : -1;
    if (i % 5 < 3) index++;
    else api++;
    ATRACE_EVENT(app, request, path, code);
    ATRACE_EVENT(app, six, 1, -2, 3, -4, 5, i);
    ATRACE_EVENT(app, none);
  }
  for (int p = 0; p < 3; p++) {
    ATRACE_BEGIN(app, phase);
    usleep(20000);
    ATRACE_END(app, phase);
  }
  long lib = usdt_lib_work(11);
  printf("tick=%ld request=%ld index=%ld api=%ld six=%ld none=%ld phase=3 hit=11 hit_sum=%ld\n", n,
         n, index, api, n, n, lib);
  return target_exit_code(argc, argv);
}
