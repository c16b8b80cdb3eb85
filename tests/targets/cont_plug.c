/* libcontplug.so: the plugin target_cont loads with dlopen(3) by name only,
 * from a directory that only the root's own ld.so.cache or the process's
 * LD_LIBRARY_PATH names (test_containers.cpp): atrace must find it the
 * way the process's dynamic linker will, inside its root. */
#include "target_common.h"

static volatile long plug_sink;

TRACED long plug_fn(long x) {
  plug_sink = plug_sink + x;
  return x + 1;
}
