/* libtarget_usdt_plugin.so: a library with USDT probes guarded by
 * semaphores (include/atrace/probe.h) that no target links against;
 * target_usdt_dlopen loads it with dlopen(3), so its probes arrive after
 * the program started (issue 17). */
#include <atrace/probe.h>

/* Both start at 0 again each time the file is mapped anew. */
static long fired;
static long guarded; /* times the semaphore was found set */

/* Fires plug:fire(k, round) for k = 0..n-1; returns the calls made since
 * the file was mapped. */
long usdt_plugin_fire(long n, long round) {
  for (long k = 0; k < n; k++) {
    /* Code that runs only while a tool traces the probe: what a program
     * guards with its semaphore (argument formatting, say). */
    if (ATRACE_ENABLED(plug, fire)) guarded++;
    ATRACE_EVENT(plug, fire, k, round);
    fired++;
  }
  return fired;
}

long usdt_plugin_guarded(void) { return guarded; }

/* plug:loaded: the library's first code that can hit a probe, run by the
 * dynamic linker at each dlopen that maps the file, before dlopen returns. */
__attribute__((constructor)) static void usdt_plugin_loaded(void) { ATRACE_EVENT(plug, loaded); }
