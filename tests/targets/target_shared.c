/* libtarget_shared.so: a shared library of the project's own, so a test can
 * select a function in a module other than the main executable
 * ("libtarget_shared.so:shared_*"). */
#include "target_shared.h"

#include "target_common.h"

static volatile long shared_sink;
static long shared_calls;

TRACED int shared_fn(int x) {
  ++shared_calls;
  shared_sink = shared_sink + x;
  return x * 2;
}

long calls_of_shared_fn(void) { return shared_calls; }
