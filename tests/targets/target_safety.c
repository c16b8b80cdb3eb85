/* The safety corpus's C target (issue 14): every way a function can leave
 * other than by one return, each printing what it computed, so a test can
 * check that tracing changes nothing (docs/safety.md).
 *
 *   target_safety jmp     setjmp/longjmp and sigsetjmp/siglongjmp, with
 *                         traced functions jumped over and returning
 *   target_safety context getcontext/swapcontext/makecontext/setcontext
 *   target_safety vfork   vfork + _exit and vfork + exec, posix_spawn
 *   target_safety fork    fork: both processes return from it
 *
 * Counts it prints ("step=N") are the calls of the traced function of that
 * name that returned normally. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include "target_common.h"

extern char** environ;

static jmp_buf env;
static sigjmp_buf senv;
static volatile long acc;

/* Returns normally: its count is exact. */
TRACED long step(long x) {
  TARGET_BARRIER();
  return x * 3 + 1;
}

/* Leaves by longjmp from two frames down: never returns. */
TRACED void jump_deep(long x) {
  acc += step(x);
  if (x % 2) longjmp(env, (int)x);
  siglongjmp(senv, (int)x);
}

TRACED void jump_mid(long x) {
  jump_deep(x);
  TARGET_BARRIER();
}

static int run_jmp(long rounds) {
  volatile long sum = 0, returned = 0;
  for (volatile long i = 1; i <= rounds; ++i) {
    int r = setjmp(env);
    if (r == 0) {
      int s = sigsetjmp(senv, 1);
      if (s == 0) {
        jump_mid(i);
      } else {
        sum += s;
      }
    } else {
      sum += r;
    }
    sum += step(i);  /* after the jump lands, calls go on normally */
    returned++;
  }
  printf("jmp sum=%ld acc=%ld\n", (long)sum, (long)acc);
  printf("step=%ld\n", (long)returned + rounds);  /* jump_deep's calls returned too */
  return 0;
}

static ucontext_t main_ctx, co_ctx;
static char co_stack[64 * 1024];
static volatile long co_steps;

static void coroutine(void) {
  for (int i = 0; i < 3; ++i) {
    co_steps += step(i);
    swapcontext(&co_ctx, &main_ctx);
  }
}

static int run_context(void) {
  volatile int resumed = 0;
  getcontext(&co_ctx);
  co_ctx.uc_stack.ss_sp = co_stack;
  co_ctx.uc_stack.ss_size = sizeof co_stack;
  co_ctx.uc_link = &main_ctx;
  makecontext(&co_ctx, coroutine, 0);
  for (int i = 0; i < 4; ++i) swapcontext(&main_ctx, &co_ctx);
  /* getcontext + setcontext: a second return from getcontext. */
  ucontext_t again;
  getcontext(&again);
  if (!resumed) {
    resumed = 1;
    setcontext(&again);
  }
  printf("context co_steps=%ld resumed=%d\n", (long)co_steps, resumed);
  printf("step=3\n");
  return 0;
}

static int run_vfork(char* self) {
  volatile long total = 0;
  for (int i = 0; i < 3; ++i) {
    pid_t p = vfork();
    if (p == 0) _exit(10 + i);
    int st = 0;
    waitpid(p, &st, 0);
    total += WEXITSTATUS(st) + step(i);
  }
  pid_t p = vfork();
  if (p == 0) {
    execl("/bin/echo", "echo", "vfork-exec ok", (char*)0);
    _exit(127);
  }
  int st = 0;
  waitpid(p, &st, 0);
  fflush(stdout);
  char* argv[] = {"echo", "posix_spawn ok", 0};
  pid_t sp;
  int err = posix_spawn(&sp, "/bin/echo", 0, 0, argv, environ);
  if (err == 0) waitpid(sp, &st, 0);
  printf("vfork total=%ld exec=%d spawn=%d/%d self=%s\n", (long)total, WEXITSTATUS(st), err,
         WEXITSTATUS(st), self[0] ? "yes" : "no");
  printf("step=3\n");
  return 0;
}

static int run_fork(void) {
  fflush(stdout);
  pid_t p = fork();
  if (p == 0) {
    printf("child step=%ld\n", step(2));
    fflush(stdout);
    _exit(0);
  }
  int st = 0;
  waitpid(p, &st, 0);
  printf("parent step=%ld child=%d\n", step(3), WEXITSTATUS(st));
  printf("step=2\n");
  return 0;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  setvbuf(stdout, NULL, _IOLBF, 0);
  int rc = 2;
  if (strcmp(mode, "jmp") == 0) rc = run_jmp(target_count_arg(argc, argv, 1, 6));
  else if (strcmp(mode, "context") == 0) rc = run_context();
  else if (strcmp(mode, "vfork") == 0) rc = run_vfork(argv[0]);
  else if (strcmp(mode, "fork") == 0) rc = run_fork();
  else fprintf(stderr, "usage: target_safety jmp|context|vfork|fork\n");
  return rc ? rc : target_exit_code(argc, argv);
}
