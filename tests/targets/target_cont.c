/* target_cont: the program the private-root tests run in a root of its own
 * (tests/integration/private_root.h), as /opt/app/target_cont, linked to
 * /opt/app/libcont.so (RUNPATH /opt/app, a path only the root has).
 *
 *   target_cont [N] [M] [--wait] [--fork] [--tag=X]
 *
 * Prints "variant=A|B" and "ready=1"; with --wait it then waits for SIGUSR1
 * (at most 60 s), so that a test attaches first. Then cont_work(N) (N calls
 * of cont_step, 3 of cont_add), then loads libcontplug.so with dlopen by
 * name, calls plug_fn M times and closes it. Prints "cont_step=N",
 * "plug_fn=M" and "checksum=...". With --fork, a child process makes the
 * same cont_work(N) first (and exits); the parent waits for it: "forked=1". */
#include <dlfcn.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "target_common.h"

long cont_work(long n);
const char* cont_variant(void);

static volatile sig_atomic_t triggered;

static void on_usr1(int sig) {
  (void)sig;
  triggered = 1;
}

static int has_flag(int argc, char** argv, const char* flag) {
  for (int i = 1; i < argc; ++i)
    if (strcmp(argv[i], flag) == 0) return 1;
  return 0;
}

/* SIGUSR1 blocked but for sigsuspend: no signal between the check and the
 * wait is lost. A handler, not SIG_DFL: the program may be its pid
 * namespace's init, which ignores signals it has no handler for. */
static void wait_for_trigger(void) {
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGUSR1);
  sigprocmask(SIG_BLOCK, &block, &old);
  printf("ready=1\n");
  alarm(60);
  while (!triggered) sigsuspend(&old);
  alarm(0);
  sigprocmask(SIG_SETMASK, &old, NULL);
}

int main(int argc, char** argv) {
  target_line_buffered();
  long n = target_count_arg(argc, argv, 0, 10);
  long m = target_count_arg(argc, argv, 1, 5);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_usr1;
  sigaction(SIGUSR1, &sa, NULL);
  printf("variant=%s\n", cont_variant());
  if (has_flag(argc, argv, "--wait")) wait_for_trigger();
  else printf("ready=1\n");

  if (has_flag(argc, argv, "--fork")) {
    pid_t child = fork();
    if (child == 0) {
      cont_work(n);
      _exit(0);
    }
    int status = 0;
    if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0) {
      fprintf(stderr, "target_cont: the forked child failed\n");
      return 3;
    }
    printf("forked=1\n");
  }
  long sum = cont_work(n);
  void* h = dlopen("libcontplug.so", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "target_cont: %s\n", dlerror());
    return 3;
  }
  long (*plug)(long) = (long (*)(long))dlsym(h, "plug_fn");
  if (!plug) {
    fprintf(stderr, "target_cont: %s\n", dlerror());
    return 3;
  }
  for (long i = 0; i < m; ++i) {
    sum += plug(i);
    TARGET_BARRIER();
  }
  dlclose(h);
  printf("cont_step=%ld\nplug_fn=%ld\nchecksum=%ld\n", n, m, sum);
  return target_exit_code(argc, argv);
}
