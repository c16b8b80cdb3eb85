// target_fastpath_unwind: throws, forced unwinds, siglongjmp and stack
// switches through functions patched by `record -p PID --fast-path`
// (tests/integration/test_fastpath_unwind.cpp). Run as
//   target_fastpath_unwind DIR MODE [N]
// it waits until fp_ready() starts with a jump (0xe9: atrace patched it),
// runs MODE, prints what it computed (the same with or without atrace),
// creates DIR/done and waits until fp_ready()'s first byte is back, then
// says whether it is the byte it started with. With DIR = "-" it runs MODE
// at once and exits (the untraced reference). Modes, with the calls they
// make (N rounds each):
//   throw N     dive() chains 6 deep, thrown at depth t and caught at depth c
//               for every 0 <= c < t <= 5, each level keeping a destructor
//               (cleanups through _Unwind_Resume), on the main thread and
//               two more; calls above the catch are unwound, the others
//               return
//   rethrow N   a catch two levels up rethrows (`throw;`) to one at the top
//   nested N    an exception thrown and caught inside a destructor while
//               another unwinds through it (nested_mid's), to nested_top
//   exit N      N threads each leave by pthread_exit from 3 traced levels,
//               N more are cancelled there (pthread_cancel)
//   sigjmp N    a signal handler siglongjmps out of sj_outer/sj_inner
//   ucontext    uftrace's s-ucontext: the context's stack in the caller's frame
//   heapctx N   a context on a heap stack, left and resumed N times
//   pingpong N  two contexts on heap stacks handing over N times each
//   backtrace N glibc backtrace() under bt_a -> bt_b -> bt_c, N times, then
//               bt_done() at bt_a's depth
//   recurse N   N chains of rec() 3,000 deep (past the 1,024-frame shadow
//               stack), the deepest throwing to the top one in every other
#include <execinfo.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <stdexcept>

#define TRACED extern "C" __attribute__((noipa, used))
#define BARRIER() __asm__ volatile("" ::: "memory")

static std::atomic<long> g_sum;  // destructors and steps, from every thread

TRACED long fp_ready(void) { return 1; }

TRACED long step(long x) {
  BARRIER();
  return x * 3 + 1;
}

// ---- throw, rethrow: dive(level, throw_at, catch_at)
struct Cleanup {
  long v;
  ~Cleanup() { g_sum += v; }
};

TRACED long dive(int level, int throw_at, int catch_at) {
  Cleanup c{level};
  if (level == throw_at) throw std::runtime_error("thrown");
  if (level == catch_at) {
    try {
      return 100 + dive(level + 1, throw_at, catch_at);
    } catch (const std::runtime_error&) {
      return -step(level);
    }
  }
  long r = dive(level + 1, throw_at, catch_at);
  BARRIER();
  return r + 1;
}

static void* throw_rounds(void* arg) {
  long rounds = (long)arg, sum = 0;
  for (long i = 0; i < rounds; i++)
    for (int t = 1; t <= 5; t++)
      for (int c = 0; c < t; c++) sum += dive(0, t, c);
  return (void*)sum;
}

static int run_throw(long rounds) {
  pthread_t t[2];
  for (auto& th : t) pthread_create(&th, nullptr, throw_rounds, (void*)rounds);
  long sum = (long)throw_rounds((void*)rounds);
  for (auto& th : t) {
    void* v;
    pthread_join(th, &v);
    sum += (long)v;
  }
  printf("throw sum=%ld cleanups=%ld\n", sum, g_sum.load());
  return 0;
}

TRACED long rt_inner(long x) {
  Cleanup c{x};
  if (x >= 0) throw std::runtime_error("inner");
  return x;
}
TRACED long rt_mid(long x) {
  try {
    return rt_inner(x);
  } catch (const std::runtime_error&) {
    g_sum += step(x);
    throw;
  }
}
TRACED long rt_outer(long x) {
  long r = rt_mid(x);
  BARRIER();
  return r + 1;
}
TRACED long rt_top(long x) {
  try {
    return rt_outer(x);
  } catch (const std::exception&) {
    return -x;
  }
}

static int run_rethrow(long rounds) {
  long sum = 0;
  for (long i = 0; i < rounds; i++) sum += rt_top(i);
  printf("rethrow sum=%ld cleanups=%ld\n", sum, g_sum.load());
  return 0;
}

// ---- nested: a throw and its catch inside a destructor that runs while
// another exception unwinds
TRACED long nested_inner(long x) {
  Cleanup c{x};
  if (x >= 0) throw std::runtime_error("inner");
  return x;
}
struct CatchesInside {
  long x;
  ~CatchesInside() {
    try {
      nested_inner(x);
    } catch (const std::runtime_error&) {
      g_sum += step(x);
    }
  }
};
TRACED long nested_mid(long x) {
  CatchesInside d{x};
  if (x >= 0) throw std::runtime_error("outer");
  return x;
}
TRACED long nested_outer(long x) {
  long r = nested_mid(x);
  BARRIER();
  return r + 1;
}
TRACED long nested_top(long x) {
  try {
    return nested_outer(x);
  } catch (const std::exception&) {
    return -x;
  }
}
static int run_nested(long rounds) {
  long sum = 0;
  for (long i = 0; i < rounds; i++) sum += nested_top(i);
  printf("nested sum=%ld inner=%ld\n", sum, g_sum.load());
  return 0;
}

// ---- exit: pthread_exit and pthread_cancel from traced depth
static pthread_barrier_t cancel_ready;

TRACED void ex_leave(long how) {
  Cleanup c{how};
  if (how == 0) pthread_exit((void*)42);
  pthread_barrier_wait(&cancel_ready);
  for (;;) pause();  // a cancellation point
}
TRACED void ex_mid(long how) {
  Cleanup c{10};
  ex_leave(how);
  BARRIER();
}
TRACED void ex_top(long how) {
  ex_mid(how);
  BARRIER();
}
static void* exit_thread(void* arg) {
  ex_top((long)arg);
  return nullptr;
}

static int run_exit(long rounds) {
  long exited = 0, cancelled = 0;
  for (long i = 0; i < rounds; i++) {
    pthread_t t;
    void* v = nullptr;
    pthread_create(&t, nullptr, exit_thread, (void*)0);
    pthread_join(t, &v);
    exited += v == (void*)42;
    pthread_barrier_init(&cancel_ready, nullptr, 2);
    pthread_create(&t, nullptr, exit_thread, (void*)1);
    pthread_barrier_wait(&cancel_ready);
    pthread_cancel(t);
    pthread_join(t, &v);
    cancelled += v == PTHREAD_CANCELED;
    pthread_barrier_destroy(&cancel_ready);
  }
  printf("exit exited=%ld cancelled=%ld cleanups=%ld\n", exited, cancelled, g_sum.load());
  return 0;
}

// ---- sigjmp: siglongjmp out of a signal handler, two traced frames down
static sigjmp_buf sj_env;
static void sj_handler(int sig) { siglongjmp(sj_env, sig); }
TRACED void sj_inner(long x) {
  g_sum += step(x);
  raise(SIGUSR1);
  BARRIER();
}
TRACED void sj_outer(long x) {
  sj_inner(x);
  BARRIER();
}
TRACED long sj_after(long x) { return step(x) + 1; }

static int run_sigjmp(long rounds) {
  struct sigaction sa {};
  sa.sa_handler = sj_handler;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGUSR1, &sa, nullptr);
  // None of these changes between a sigsetjmp and its siglongjmp: plain
  // locals keep their values.
  long jumps = 0, sum = 0;
  for (long i = 0; i < rounds; i++) {
    if (sigsetjmp(sj_env, 1) == 0) sj_outer(i);
    else jumps++;
    sum += sj_after(i);
  }
  printf("sigjmp jumps=%ld sum=%ld acc=%ld\n", jumps, sum, g_sum.load());
  return 0;
}

// ---- leftjmp: longjmp out of two traced frames to an untraced caller,
// whose next calls (untraced) write over the frames' stack; no traced call
// returns below them before the recording ends (perl's die, say)
static jmp_buf lj_env;
TRACED void lj_inner(long x) {
  g_sum += step(x);
  longjmp(lj_env, 1);
}
TRACED void lj_outer(long x) {
  lj_inner(x);
  BARRIER();
}
__attribute__((noinline)) static long lj_scrub(long x) {
  volatile char buf[4096];
  memset((char*)buf, (int)x, sizeof buf);
  return buf[x % sizeof buf];
}
static int run_leftjmp(long rounds) {
  // Changed between the setjmp and its longjmp: statics keep them.
  static long jumps, sum, i;
  for (i = 0; i < rounds; i++) {
    if (setjmp(lj_env) == 0) lj_outer(i);
    else jumps++;
    sum += lj_scrub(i);
  }
  printf("leftjmp jumps=%ld sum=%ld\n", jumps, sum);
  return 0;
}

// ---- stack switches (tests/targets/target_safety.c's three layouts)
static ucontext_t uc_main_ctx, uc_foo_ctx;
TRACED void uc_foo(void) { printf("uc_foo: in the context, step=%ld\n", step(7)); }
TRACED void uc_switch(void) {
  swapcontext(&uc_main_ctx, &uc_foo_ctx);
  BARRIER();
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
  return 0;
}

static ucontext_t heap_main_ctx, heap_ctx;
static long heap_rounds;
TRACED void heap_fn(void) {
  for (long i = 0; i < heap_rounds; ++i) {
    g_sum += step(i);
    swapcontext(&heap_ctx, &heap_main_ctx);
  }
}
TRACED void heap_switch(void) {
  swapcontext(&heap_main_ctx, &heap_ctx);
  BARRIER();
}
static int run_heapctx(long rounds) {
  char* stack = (char*)malloc(64 * 1024);
  heap_rounds = rounds;
  getcontext(&heap_ctx);
  heap_ctx.uc_stack.ss_sp = stack;
  heap_ctx.uc_stack.ss_size = 64 * 1024;
  heap_ctx.uc_link = &heap_main_ctx;
  makecontext(&heap_ctx, heap_fn, 0);
  for (long i = 0; i <= rounds; ++i) {
    heap_switch();
    g_sum += step(100 + i);
  }
  free(stack);
  printf("heapctx sum=%ld\n", g_sum.load());
  return 0;
}

static ucontext_t pp_main_ctx, pp_a_ctx, pp_b_ctx;
static long pp_rounds;
TRACED void pp_swap(ucontext_t* from, ucontext_t* to) {
  swapcontext(from, to);
  BARRIER();
}
TRACED void pp_a(void) {
  for (long i = 0; i < pp_rounds; ++i) {
    g_sum += step(i);
    pp_swap(&pp_a_ctx, &pp_b_ctx);
  }
}
TRACED void pp_b(void) {
  for (long i = 0; i < pp_rounds; ++i) {
    g_sum += step(1000 + i) * 2;
    pp_swap(&pp_b_ctx, &pp_a_ctx);
  }
}
static int run_pingpong(long rounds) {
  char* sa = (char*)malloc(64 * 1024);
  char* sb = (char*)malloc(64 * 1024);
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
  g_sum += step(5000);
  free(sa);
  free(sb);
  printf("pingpong sum=%ld\n", g_sum.load());
  return 0;
}

// ---- backtrace: a stack walk through hooked frames (it must find the
// frames an untraced run finds: its count is printed)
TRACED int bt_c(void) {
  void* frames[64];
  int n = backtrace(frames, 64);
  BARRIER();
  return n;
}
TRACED int bt_b(void) { return bt_c() + 0 * step(1); }
TRACED int bt_a(void) { return bt_b() + 0 * step(2); }
TRACED int bt_done(void) { return (int)step(3); }
static int run_backtrace(long rounds) {
  long frames = 0;
  for (long i = 0; i < rounds; i++) frames += bt_a();
  bt_done();
  printf("backtrace frames=%ld\n", frames);
  return 0;
}

// ---- recurse: past the shadow stack, returning and throwing
TRACED long rec(long n, long throw_at_bottom) {
  if (n == 0) {
    if (throw_at_bottom) throw std::runtime_error("bottom");
    return 0;
  }
  long r = rec(n - 1, throw_at_bottom);
  BARRIER();
  return r + 1;
}
TRACED long rec_top(long n, long thrown) {
  try {
    return rec(n, thrown);
  } catch (const std::exception&) {
    return -1;
  }
}
static int run_recurse(long rounds) {
  long sum = 0;
  for (long i = 0; i < rounds; i++) sum += rec_top(2999, i % 2);
  printf("recurse sum=%ld\n", sum);
  return 0;
}

static int patched(void) { return *(volatile unsigned char*)(void*)fp_ready == 0xe9; }

static void wait_for(int want, const char* what) {
  for (int i = 0; i < 4000; i++) {  // 20 s
    if (patched() == want) return;
    struct timespec ts = {0, 5 * 1000 * 1000};
    nanosleep(&ts, nullptr);
  }
  fprintf(stderr, "target_fastpath_unwind: %s never came\n", what);
  exit(3);
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: target_fastpath_unwind DIR|- MODE [N]\n");
    return 2;
  }
  const int reference = strcmp(argv[1], "-") == 0;
  const char* mode = argv[2];
  const long n = argc > 3 ? atol(argv[3]) : 1;
  const unsigned char first = *(volatile unsigned char*)(void*)fp_ready;
  if (!reference) wait_for(1, "the patch");
  fp_ready();
  int rc = 2;
  if (!strcmp(mode, "throw")) rc = run_throw(n);
  else if (!strcmp(mode, "rethrow")) rc = run_rethrow(n);
  else if (!strcmp(mode, "nested")) rc = run_nested(n);
  else if (!strcmp(mode, "exit")) rc = run_exit(n);
  else if (!strcmp(mode, "sigjmp")) rc = run_sigjmp(n);
  else if (!strcmp(mode, "leftjmp")) rc = run_leftjmp(n);
  else if (!strcmp(mode, "ucontext")) rc = run_ucontext();
  else if (!strcmp(mode, "heapctx")) rc = run_heapctx(n);
  else if (!strcmp(mode, "pingpong")) rc = run_pingpong(n);
  else if (!strcmp(mode, "backtrace")) rc = run_backtrace(n);
  else if (!strcmp(mode, "recurse")) rc = run_recurse(n);
  fflush(stdout);
  if (reference || rc) return rc;
  char done[4096];
  snprintf(done, sizeof done, "%s/done", argv[1]);
  fclose(fopen(done, "w"));
  wait_for(0, "the code given back");
  printf("restored %s\n",
         *(volatile unsigned char*)(void*)fp_ready == first ? "same" : "different");
  return 0;
}
