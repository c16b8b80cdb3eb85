/* target_proctree: a process tree with exact, argv-given call counts
 * (issue 32: --follow-forks through fork, exec and posix_spawn).
 *
 *   target_proctree MODE N [PROG ARGS...] [--tag=X]
 *
 *   fork-exec    tree_launch() N times: fork(), the child execs PROG ARGS
 *   vfork-exec   tree_launch() N times: vfork(), the child execs PROG ARGS
 *   spawn        tree_launch() N times: posix_spawn(PROG ARGS)
 *   fork-return  tree_forker() once, which forks inside: the parent and the
 *                child both return from it; then the parent calls
 *                tree_parent_side() once, the child tree_child_side() N
 *                times, and both return from main
 *
 * In the launching modes the parent waits for each child before the next
 * tree_launch() and calls tree_work() once at the end. Every function runs
 * in the process named: a child that execs runs none of this program's
 * functions (tree_launch's child part is not a function of its own).
 * Prints "pid=P" and the counts of the process that prints them; each
 * child's exit status must be 0 (else this exits 3). */
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "target_common.h"

extern char** environ;

static volatile unsigned long sink;
static char** child_argv;

static void wait_child(pid_t pid) {
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0) {
    fprintf(stderr, "target_proctree: child %d failed (status %d)\n", (int)pid, status);
    exit(3);
  }
}

TRACED void tree_launch(int mode) {
  pid_t pid = -1;
  if (mode == 0) {
    pid = fork();
    if (pid == 0) {
      execv(child_argv[0], child_argv);
      _exit(127);
    }
  } else if (mode == 1) {
    pid = vfork();
    if (pid == 0) {
      execv(child_argv[0], child_argv);
      _exit(127);
    }
  } else if (posix_spawn(&pid, child_argv[0], NULL, NULL, child_argv, environ) != 0) {
    pid = -1;
  }
  wait_child(pid);
  TARGET_BARRIER();
}

TRACED void tree_work(void) {
  sink = sink * 31u + 7u;
  TARGET_BARRIER();
}

TRACED void tree_parent_side(void) {
  sink = sink * 31u + 1u;
  TARGET_BARRIER();
}

TRACED void tree_child_side(void) {
  sink = sink * 31u + 2u;
  TARGET_BARRIER();
}

/* Returns the fork's result: both processes return from here. */
TRACED pid_t tree_forker(void) {
  fflush(stdout); /* the child must not print the parent's buffer again */
  pid_t pid = fork();
  TARGET_BARRIER();
  return pid;
}

int main(int argc, char** argv) {
  target_line_buffered();
  if (argc < 3) {
    fprintf(stderr, "usage: %s fork-exec|vfork-exec|spawn|fork-return N [PROG ARGS...]\n", argv[0]);
    return 2;
  }
  const char* mode_name = argv[1];
  const long n = strtol(argv[2], NULL, 10);
  printf("pid=%d\n", (int)getpid());
  if (strcmp(mode_name, "fork-return") == 0) {
    pid_t pid = tree_forker();
    if (pid < 0) return 3;
    if (pid == 0) {
      for (long i = 0; i < n; ++i) tree_child_side();
      printf("child pid=%d tree_child_side=%ld\n", (int)getpid(), n);
      return 0;
    }
    tree_parent_side();
    wait_child(pid);
    printf("tree_forker=1\ntree_parent_side=1\n");
    return 0;
  }
  int mode = strcmp(mode_name, "fork-exec") == 0    ? 0
             : strcmp(mode_name, "vfork-exec") == 0 ? 1
             : strcmp(mode_name, "spawn") == 0      ? 2
                                                    : -1;
  if (mode < 0 || argc < 4) {
    fprintf(stderr, "%s: unknown mode '%s' or no program\n", argv[0], mode_name);
    return 2;
  }
  child_argv = argv + 3;
  for (long i = 0; i < n; ++i) tree_launch(mode);
  tree_work();
  printf("tree_launch=%ld\ntree_work=1\n", n);
  return 0;
}
