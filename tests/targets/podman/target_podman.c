/* target_podman: the program of the test container (make_rootfs.sh puts it at
 * /opt/app/target_podman), linked to libcont.so, which it finds through its
 * RUNPATH /opt/app: it runs only inside the container's root.
 *
 *   target_podman N [--rounds=R] [--forks=K] [--tag=X]
 *
 * A round: this process calls cont_work() N times, then forks K children
 * that call it N times each and waits for them. Without --rounds, one
 * round at once. With --rounds=R it prints "ready=1" and makes a round at
 * each SIGUSR1 it gets (sent from the host to its host pid, once a tracer
 * is attached), R rounds, then exits; it gives up (exit 4) after 60 s
 * without one.
 * Prints "pid=P" (its pid as the container sees it), "round=I" after each
 * round, and at the end "cont_work=C" (its own calls) and "children=K*R"
 * (children that made their N calls and exited 0). */
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../target_common.h"
#include "podman_lib.h"

static long option(int argc, char** argv, const char* name, long fallback) {
  size_t len = strlen(name);
  for (int i = 1; i < argc; ++i)
    if (strncmp(argv[i], name, len) == 0) return atol(argv[i] + len);
  return fallback;
}

static volatile long sink;

static long calls(long n) {
  for (long i = 0; i < n; ++i) {
    sink = sink + cont_work((int)i);
    TARGET_BARRIER();
  }
  return n;
}

/* K children of N calls each; how many of them ended well. */
static long fork_children(long k, long n) {
  long ok = 0;
  for (long i = 0; i < k; ++i) {
    pid_t c = fork();
    if (c < 0) {
      perror("target_podman: fork");
      exit(3);
    }
    if (c == 0) {
      calls(n);
      _exit(0);
    }
    int status = 0;
    if (waitpid(c, &status, 0) == c && WIFEXITED(status) && WEXITSTATUS(status) == 0) ++ok;
  }
  return ok;
}

int main(int argc, char** argv) {
  target_line_buffered();
  long n = target_count_arg(argc, argv, 0, 10);
  long rounds = option(argc, argv, "--rounds=", 0);
  long forks = option(argc, argv, "--forks=", 0);
  printf("pid=%d\n", (int)getpid());

  /* Blocked, SIGUSR1 is taken by sigtimedwait only; a blocked signal is
   * delivered even to a container's pid 1, which drops the signals it has
   * no handler for. */
  sigset_t go;
  sigemptyset(&go);
  sigaddset(&go, SIGUSR1);
  sigprocmask(SIG_BLOCK, &go, NULL);

  long own = 0, children = 0;
  if (rounds == 0) {
    own += calls(n);
    children += fork_children(forks, n);
  } else {
    printf("ready=1\n");
    for (long r = 1; r <= rounds; ++r) {
      struct timespec limit = {60, 0};
      if (sigtimedwait(&go, NULL, &limit) != SIGUSR1) {
        fprintf(stderr, "target_podman: no SIGUSR1 for round %ld\n", r);
        return 4;
      }
      own += calls(n);
      children += fork_children(forks, n);
      printf("round=%ld\n", r);
    }
  }
  printf("cont_work=%ld\n", own);
  printf("children=%ld\n", children);
  return target_exit_code(argc, argv);
}
