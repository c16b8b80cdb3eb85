/* libcontplug.so: the plugin target_cont loads with dlopen(3) by name only,
 * from a directory that only the root's own ld.so.cache or the process's
 * LD_LIBRARY_PATH names (test_containers.cpp): atrace must find it the
 * way the process's dynamic linker will, inside its root. plug_fn fires
 * the USDT probe plug:call (with a semaphore) with its argument. */
#include <atrace/probe.h>

#include "target_common.h"

static volatile long plug_sink;

TRACED long plug_fn(long x) {
  ATRACE_EVENT(plug, call, x);
  plug_sink = plug_sink + x;
  return x + 1;
}
