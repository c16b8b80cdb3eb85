// target_fastpath_forks: fork children and a grandchild of a patched
// process, each making a known number of calls of work(), for `record -p
// PID --fast-path --follow-forks` (tests/integration/test_fastpath_forks.cpp).
// It waits until work() starts with a jump (0xe9: atrace patched it), then:
//   the parent    100 calls of work(), then forks A, C (through forker())
//   child A       7 calls inside forker() right after the fork (before
//                 atrace gives it a ring: counted, not recorded, or
//                 recorded when the ring came first), waits for its ring,
//                 returns from forker() (an exit of a call its parent
//                 entered), 200 calls, forks G, waits for it, tells the
//                 parent it is done and waits until work() is given back
//   grandchild G  waits for its ring, 300 calls, exits
//   child C       waits for its ring, 50 calls, execs this program with
//                 "exec" (60 calls there: its exec'd program is not patched)
// Each child waits for its ring by watching its /memfd:atrace-ring mapping
// change to another memfd (another inode: atrace replaced the inherited
// lanes). The parent then tells the test it is done by creating argv[1]/done,
// waits until work()'s first byte is back, says whether it is the one it
// started with, waits for A (which exits 5 when its byte is not), exits 0.
// With argv[1] = "-" it runs at once and exits (the untraced reference).
// With "launched" after the directory (`record --fast-path --follow-forks
// -- target DIR launched`): patched before main, each child has its ring
// at its first instruction (atrace gives it at the fork's first stop:
// exits 3 when it has not), and nothing is given back before the end.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int reference;
static int launched;
static unsigned char first;

__attribute__((noinline)) long work(long x) {
  __asm__ volatile("");
  return x * 3 + 1;
}

static void nap(void) {
  struct timespec ts = {0, 2 * 1000 * 1000};
  nanosleep(&ts, NULL);
}

// The inode of this process's lanes mapping, 0 when it has none.
static unsigned long lanes_inode(void) {
  FILE* f = fopen("/proc/self/maps", "r");
  char line[512];
  unsigned long inode = 0;
  while (f && fgets(line, sizeof line, f)) {
    if (!strstr(line, "/memfd:atrace-ring")) continue;
    unsigned long ino = 0;
    if (sscanf(line, "%*s %*s %*s %*s %lu", &ino) == 1) inode = ino;
    break;
  }
  if (f) fclose(f);
  return inode;
}

static void wait_for_ring(unsigned long inherited) {
  if (reference) return;
  for (int i = 0; i < (launched ? 1 : 10000); i++) {  // 20 s
    if (lanes_inode() != inherited) return;
    nap();
  }
  fprintf(stderr, "target_fastpath_forks: process %d never got a ring\n", getpid());
  _exit(3);
}

static long calls(long n, long seed) {
  long sum = 0;
  for (long i = 0; i < n; i++) sum += work(seed + i);
  return sum;
}

// Forks inside a patched call: the child returns from it through its copy
// of the shadow stack. `pre`: calls the child makes before waiting for its
// ring.
__attribute__((noinline)) pid_t forker(long pre) {
  const unsigned long inherited = lanes_inode();
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    calls(pre, 1000);
    wait_for_ring(inherited);
  }
  __asm__ volatile("");
  return pid;
}

// Whether work()'s first byte is back (it waits until it is not a jump).
static int wait_restored(void) {
  if (launched) return 1;
  for (int i = 0; i < 10000 && !reference; i++) {
    if (*(volatile unsigned char*)(void*)work != 0xe9) break;
    nap();
  }
  return *(volatile unsigned char*)(void*)work == first;
}

static int reap(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char** argv) {
  if (argc >= 2 && strcmp(argv[1], "exec") == 0) {
    printf("exec'd %ld\n", calls(60, 5000));
    return 0;
  }
  reference = argc < 2 || strcmp(argv[1], "-") == 0;
  launched = argc >= 3 && strcmp(argv[2], "launched") == 0;
  first = *(volatile unsigned char*)(void*)work;
  for (int i = 0; i < 4000 && !reference && *(volatile unsigned char*)(void*)work != 0xe9; i++)
    nap();
  printf("parent %ld\n", calls(100, 0));
  int done[2];
  if (pipe(done) != 0) return 2;

  pid_t a = forker(7);
  if (a == 0) {
    close(done[0]);
    printf("A %ld\n", calls(200, 2000));
    pid_t g = forker(0);
    if (g == 0) {
      printf("G %ld\n", calls(300, 3000));
      fflush(stdout);
      _exit(0);
    }
    printf("G exited %d\n", reap(g));
    fflush(stdout);
    if (write(done[1], "A", 1) != 1) _exit(2);
    _exit(wait_restored() ? 0 : 5);
  }
  close(done[1]);
  char byte;
  if (read(done[0], &byte, 1) != 1) return 2;

  pid_t c = forker(0);
  if (c == 0) {
    printf("C %ld\n", calls(50, 4000));
    fflush(stdout);
    execl("/proc/self/exe", argv[0], "exec", (char*)NULL);
    _exit(4);
  }
  printf("C exited %d\n", reap(c));
  fflush(stdout);
  if (!reference) {
    char path[4096];
    snprintf(path, sizeof path, "%s/done", argv[1]);
    FILE* f = fopen(path, "w");
    if (f) fclose(f);
  }
  printf("parent restored %s\n", wait_restored() ? "same" : "different");
  printf("A exited %d\n", reap(a));
  return 0;
}
