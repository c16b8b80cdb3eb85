/* libcont.so: the library of the private-root tests (test_containers.cpp),
 * at /opt/app/libcont.so inside each root and nowhere on the host's paths.
 * Built twice from this file: cont_a/libcont.so and, with -DCONT_VARIANT_B,
 * cont_b/libcont.so, whose extra function comes first in the file so that
 * every other function sits at another offset and the build ids differ. A
 * tracer that probed one root's file through another's (or the host's)
 * path would miss or misplace every probe.
 *
 * cont_work(n) calls cont_step n times (each fires the USDT probe
 * cont:step with its index; variant B also calls cont_only_b each time),
 * then cont_add(1, 10), cont_add(2, 20), cont_add(3, 30). */
#include <atrace/probe.h>

#include "target_common.h"

static volatile long cont_sink;

#ifdef CONT_VARIANT_B
TRACED long cont_only_b(long k) {
  cont_sink = cont_sink + k * 3;
  return cont_sink;
}
#endif

TRACED long cont_step(long k) {
  ATRACE_EVENT(cont, step, k);
#ifdef CONT_VARIANT_B
  cont_only_b(k);
  TARGET_BARRIER();
#endif
  cont_sink = cont_sink + k;
  return k * 2;
}

/* Its parameters are read from this file's debug information
 * (--args=cont_add@auto). */
TRACED long cont_add(int a, long b) {
  TARGET_BARRIER();
  return a + b;
}

TRACED long cont_work(long n) {
  long sum = 0;
  for (long k = 0; k < n; ++k) {
    sum += cont_step(k);
    TARGET_BARRIER();
  }
  for (int a = 1; a <= 3; ++a) {
    sum += cont_add(a, 10L * a);
    TARGET_BARRIER();
  }
  return sum;
}

/* "A" or "B": which build the process runs. */
const char* cont_variant(void) {
#ifdef CONT_VARIANT_B
  return "B";
#else
  return "A";
#endif
}
