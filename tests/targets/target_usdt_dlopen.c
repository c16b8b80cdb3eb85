/* target_usdt_dlopen: loads libtarget_usdt_plugin.so with dlopen(3)
 * (found through its RUNPATH), fires its probe plug:fire(k, 1) N times,
 * dlcloses it, loads it again and fires plug:fire(k, 2) M times.
 *
 *   target_usdt_dlopen [N] [M] [--wait=FILE] [--tag=X]
 *
 * --wait=FILE: prints "ready=1", then waits (at most 60 s) until FILE
 * exists before the first dlopen, so that a test can attach first.
 * Prints "pid=P", "fired=N+M", "guarded=G" (the times the probe's
 * semaphore was found set: N+M while traced, 0 untraced) and "reloaded=1"
 * when the second dlopen mapped the file anew (dlclose unmapped it). */
#include <dlfcn.h>
#include <unistd.h>

#include "target_common.h"

typedef long (*fire_t)(long, long);
typedef long (*guarded_t)(void);

static const char* wait_file(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (strncmp(argv[i], "--wait=", 7) == 0) return argv[i] + 7;
  return NULL;
}

/* Loads the plugin, fires its probe n times, closes it; returns the
 * plugin's own count before the close, adds its guarded count. */
static long load_and_fire(long n, long round, long* guarded) {
  void* h = dlopen("libtarget_usdt_plugin.so", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "target_usdt_dlopen: %s\n", dlerror());
    exit(3);
  }
  fire_t fire = (fire_t)dlsym(h, "usdt_plugin_fire");
  guarded_t sem = (guarded_t)dlsym(h, "usdt_plugin_guarded");
  if (!fire || !sem) {
    fprintf(stderr, "target_usdt_dlopen: %s\n", dlerror());
    exit(3);
  }
  long own = fire(n, round);
  *guarded += sem();
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
  long guarded = 0;
  long first = load_and_fire(n, 1, &guarded);
  long second = load_and_fire(m, 2, &guarded);
  printf("fired=%ld\nguarded=%ld\nreloaded=%d\n", n + m, guarded, first == n && second == m);
  return 0;
}
