/* target_dlopen: loads libtarget_plugin.so with dlopen(3) (found through
 * its RUNPATH, as a plugin directory would be), calls plugin_fn() N times,
 * dlcloses it, loads it again and calls it M times.
 *
 *   target_dlopen [N] [M] [--wait=FILE] [--exit=CODE] [--tag=X]
 *
 * --wait=FILE: prints "ready=1", then waits (at most 60 s) until FILE
 * exists before the first dlopen, so that a test can attach first.
 * Prints "pid=P", "plugin_fn=N+M" (calls made), and "reloaded=1" when the
 * second dlopen mapped the file anew (the library's own count started
 * from 0 again: dlclose unmapped it). */
#include <dlfcn.h>
#include <unistd.h>

#include "target_common.h"

typedef int (*plugin_fn_t)(int);
typedef long (*plugin_count_t)(void);

static const char* wait_file(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (strncmp(argv[i], "--wait=", 7) == 0) return argv[i] + 7;
  return NULL;
}

/* Loads the plugin, calls plugin_fn n times, closes it; returns the
 * plugin's own count before the close. */
static long load_and_call(long n, long* acc) {
  void* h = dlopen("libtarget_plugin.so", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "target_dlopen: %s\n", dlerror());
    exit(3);
  }
  plugin_fn_t fn = (plugin_fn_t)dlsym(h, "plugin_fn");
  plugin_count_t count = (plugin_count_t)dlsym(h, "plugin_calls_so_far");
  if (!fn || !count) {
    fprintf(stderr, "target_dlopen: %s\n", dlerror());
    exit(3);
  }
  for (long i = 0; i < n; ++i) {
    *acc += fn((int)i);
    TARGET_BARRIER();
  }
  long own = count();
  dlclose(h);
  return own;
}

int main(int argc, char** argv) {
  target_line_buffered();
  long n = target_count_arg(argc, argv, 0, 10);
  long m = target_count_arg(argc, argv, 1, 5);
  printf("pid=%d\n", (int)getpid());
  const char* wait = wait_file(argc, argv);
  if (wait) {
    printf("ready=1\n");
    for (int i = 0; i < 6000 && access(wait, F_OK) != 0; ++i) usleep(10000);
  }
  long acc = 0;
  long first = load_and_call(n, &acc);
  long second = load_and_call(m, &acc);
  printf("plugin_fn=%ld\nreloaded=%d\nchecksum=%ld\n", n + m, first == n && second == m, acc);
  return target_exit_code(argc, argv);
}
