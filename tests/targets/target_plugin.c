/* libtarget_plugin.so: a library no target links against; target_dlopen
 * loads it with dlopen(3), so its code arrives after the program started
 * ("libtarget_plugin.so*:plugin_fn", issue 17). */
#include "target_common.h"

static volatile long plugin_sink;
static long plugin_calls; /* starts at 0 again each time the file is mapped anew */

TRACED int plugin_fn(int x) {
  ++plugin_calls;
  plugin_sink = plugin_sink + x;
  return x + 1;
}

long plugin_calls_so_far(void) { return plugin_calls; }
