/* The safety corpus's C target (issue 14): every way a function can leave
 * other than by one return, each printing what it computed, so a test can
 * check that tracing changes nothing (docs/safety.md).
 *
 *   target_safety jmp     setjmp/longjmp and sigsetjmp/siglongjmp, with
 *                         traced functions jumped over and returning
 *   target_safety context getcontext/swapcontext/makecontext/setcontext
 *   target_safety ucontext  uftrace's s-ucontext layout: the context's stack
 *                         is a buffer in the caller's frame, above the frame
 *                         of the traced function that switches to it
 *   target_safety heapctx N a context on a heap stack, switched to N times
 *   target_safety pingpong N two contexts on heap stacks handing over to
 *                         each other N times each
 *   target_safety backtrace N  glibc backtrace() 4 traced frames down, N
 *                         times; prints the frames it found, named
 *   target_safety walkjmp N  a stack walk left by longjmp from its callback,
 *                         then a whole backtrace(), N times
 *   target_safety vfork   vfork + _exit and vfork + exec, posix_spawn
 *   target_safety fork    fork: both processes return from it
 *
 * Counts it prints ("step=N") are the calls of the traced function of that
 * name that returned normally. */
#define _GNU_SOURCE
#include <execinfo.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unwind.h>
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

/* uftrace's s-ucontext: main's frame holds the context's stack, so the
 * context runs above uc_switch's pending frame. */
static ucontext_t uc_main_ctx, uc_foo_ctx;

TRACED void uc_foo(void) {
  printf("uc_foo: in the context, step=%ld\n", step(7));
}

TRACED void uc_switch(void) {
  swapcontext(&uc_main_ctx, &uc_foo_ctx);
  TARGET_BARRIER();
}

TRACED int run_ucontext(void) {
  char stack[64 * 1024];
  getcontext(&uc_foo_ctx);
  uc_foo_ctx.uc_stack.ss_sp = stack;
  uc_foo_ctx.uc_stack.ss_size = sizeof stack;
  uc_foo_ctx.uc_link = &uc_main_ctx;
  makecontext(&uc_foo_ctx, uc_foo, 0);
  uc_switch();
  printf("ucontext: back in the caller, step=%ld\n", step(8));
  printf("step=2\n");
  return 0;
}

/* A context on a heap stack (below every frame of the main stack), left
 * and resumed several times, returning at last through uc_link. */
static ucontext_t heap_main_ctx, heap_ctx;
static long heap_rounds;
static volatile long heap_sum;

TRACED void heap_fn(void) {
  for (long i = 0; i < heap_rounds; ++i) {
    heap_sum += step(i);
    swapcontext(&heap_ctx, &heap_main_ctx);
  }
}

TRACED void heap_switch(void) {
  swapcontext(&heap_main_ctx, &heap_ctx);
  TARGET_BARRIER();
}

static int run_heapctx(long rounds) {
  char* stack = malloc(64 * 1024);
  heap_rounds = rounds;
  getcontext(&heap_ctx);
  heap_ctx.uc_stack.ss_sp = stack;
  heap_ctx.uc_stack.ss_size = 64 * 1024;
  heap_ctx.uc_link = &heap_main_ctx;
  makecontext(&heap_ctx, heap_fn, 0);
  for (long i = 0; i <= rounds; ++i) {
    heap_switch();
    heap_sum += step(100 + i);
  }
  free(stack);
  printf("heapctx sum=%ld\n", (long)heap_sum);
  printf("step=%ld\n", 2 * rounds + 1);
  return 0;
}

/* Two contexts handing over to each other: a, b, a, b, ... then a returns
 * to main through uc_link; b is left where it last stopped. */
static ucontext_t pp_main_ctx, pp_a_ctx, pp_b_ctx;
static long pp_rounds;
static volatile long pp_sum;

TRACED void pp_swap(ucontext_t* from, ucontext_t* to) {
  swapcontext(from, to);
  TARGET_BARRIER();
}

TRACED void pp_a(void) {
  for (long i = 0; i < pp_rounds; ++i) {
    pp_sum += step(i);
    pp_swap(&pp_a_ctx, &pp_b_ctx);
  }
}

TRACED void pp_b(void) {
  for (long i = 0; i < pp_rounds; ++i) {
    pp_sum += step(1000 + i) * 2;
    pp_swap(&pp_b_ctx, &pp_a_ctx);
  }
}

static int run_pingpong(long rounds) {
  char* sa = malloc(64 * 1024);
  char* sb = malloc(64 * 1024);
  pp_rounds = rounds;
  getcontext(&pp_a_ctx);
  pp_a_ctx.uc_stack.ss_sp = sa;
  pp_a_ctx.uc_stack.ss_size = 64 * 1024;
  pp_a_ctx.uc_link = &pp_main_ctx;
  makecontext(&pp_a_ctx, pp_a, 0);
  getcontext(&pp_b_ctx);
  pp_b_ctx.uc_stack.ss_sp = sb;
  pp_b_ctx.uc_stack.ss_size = 64 * 1024;
  pp_b_ctx.uc_link = &pp_main_ctx;
  makecontext(&pp_b_ctx, pp_b, 0);
  pp_swap(&pp_main_ctx, &pp_a_ctx);
  pp_sum += step(5000);
  free(sa);
  free(sb);
  printf("pingpong sum=%ld\n", (long)pp_sum);
  printf("step=%ld\n", 2 * rounds + 1);
  return 0;
}

/* glibc backtrace() 4 traced frames down: the frames it finds, each named
 * by the nearest of the functions below whose start lies before it (within
 * 512 bytes: these are short), "?" otherwise; ASLR changes no line. */
TRACED int bt_foo(int print);
TRACED int bt_c(int print) {
  int n = bt_foo(print);
  TARGET_BARRIER();
  return n;
}
TRACED int bt_b(int print) {
  int n = bt_c(print);
  TARGET_BARRIER();
  return n;
}
TRACED int bt_a(int print) {
  int n = bt_b(print);
  TARGET_BARRIER();
  return n;
}
int run_backtrace(long rounds);

static const char* frame_name(void* a) {
  static const struct {
    const char* name;
    void* at;
  } known[] = {{"bt_foo", (void*)bt_foo}, {"bt_c", (void*)bt_c},
               {"bt_b", (void*)bt_b},     {"bt_a", (void*)bt_a},
               {"run_backtrace", (void*)run_backtrace}};
  const char* best = "?";
  unsigned long dist = 512;
  for (size_t i = 0; i < sizeof known / sizeof known[0]; ++i) {
    unsigned long d = (unsigned long)a - (unsigned long)known[i].at;
    if ((char*)a > (char*)known[i].at && d < dist) {
      dist = d;
      best = known[i].name;
    }
  }
  return best;
}

TRACED int bt_foo(int print) {
  void* frames[64];
  int n = backtrace(frames, 64);
  if (print) {
    printf("backtrace n=%d:", n);
    for (int i = 0; i < n && i < 5; ++i) printf(" %s", frame_name(frames[i]));
    printf("\n");
  }
  TARGET_BARRIER();
  return n;
}

TRACED int run_backtrace(long rounds) {
  long total = 0;
  for (long i = 0; i < rounds; ++i) total += bt_a(i == 0 || i == rounds - 1);
  printf("backtrace total=%ld\n", total);
  TARGET_BARRIER();
  return 0;
}

/* _Unwind_Backtrace's callback longjmps out of the walk at its second
 * frame: the walk never returns (its frames stay disarmed); the next walk,
 * higher on the stack, must not re-arm them. */
static jmp_buf wj_env;
static int wj_frames;

static _Unwind_Reason_Code wj_step(struct _Unwind_Context* ctx, void* arg) {
  (void)ctx;
  (void)arg;
  if (++wj_frames == 2) longjmp(wj_env, 1);
  return _URC_NO_REASON;
}

TRACED void wj_deep(void) {
  _Unwind_Backtrace(wj_step, 0);
  TARGET_BARRIER();
}

TRACED void wj_mid(void) {
  wj_deep();
  TARGET_BARRIER();
}

static int run_walkjmp(long rounds) {
  volatile long n = 0;
  for (volatile long i = 0; i < rounds; ++i) {
    wj_frames = 0;
    if (setjmp(wj_env) == 0) wj_mid();
    n += step(i);
    n += bt_a(i == 0);
  }
  printf("walkjmp n=%ld\n", (long)n);
  printf("step=%ld\n", rounds);
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
  else if (strcmp(mode, "ucontext") == 0) rc = run_ucontext();
  else if (strcmp(mode, "heapctx") == 0) rc = run_heapctx(target_count_arg(argc, argv, 1, 3));
  else if (strcmp(mode, "pingpong") == 0) rc = run_pingpong(target_count_arg(argc, argv, 1, 4));
  else if (strcmp(mode, "backtrace") == 0) rc = run_backtrace(target_count_arg(argc, argv, 1, 10));
  else if (strcmp(mode, "walkjmp") == 0) rc = run_walkjmp(target_count_arg(argc, argv, 1, 5));
  else if (strcmp(mode, "vfork") == 0) rc = run_vfork(argv[0]);
  else if (strcmp(mode, "fork") == 0) rc = run_fork();
  else fprintf(stderr, "usage: target_safety jmp|context|ucontext|heapctx|pingpong|backtrace|walkjmp|vfork|fork\n");
  return rc ? rc : target_exit_code(argc, argv);
}
