/* net_workload: N messages sent and received by one thread, for
 * net_cost.sh (what the net group, record --kernel=+net, adds to a send and
 * a receive). No peer thread and no blocking: each round trip sends 64
 * bytes on one end and receives them on the other, so what is timed is the
 * two calls, not the scheduler.
 *
 *   net_workload MODE N      MODE: tcp (127.0.0.1), unix (socketpair), pipe
 *
 * Prints "messages=2N", "ns_per_msg=X" (CLOCK_MONOTONIC) and
 * "cpu_ns_per_msg=Y" (CLOCK_THREAD_CPUTIME_ID: the fexit programs run in
 * the calling thread). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static char buf[64];

static long long now(clockid_t c) {
  struct timespec t;
  clock_gettime(c, &t);
  return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void tcp_pair(int fd[2]) {
  struct sockaddr_in a = {0};
  socklen_t len = sizeof(a);
  int l = socket(AF_INET, SOCK_STREAM, 0);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(l, (struct sockaddr*)&a, len) || listen(l, 1) ||
      getsockname(l, (struct sockaddr*)&a, &len))
    exit(3);
  fd[1] = socket(AF_INET, SOCK_STREAM, 0);
  if (connect(fd[1], (struct sockaddr*)&a, len)) exit(3);
  fd[0] = accept(l, NULL, NULL);
  close(l);
}

__attribute__((noinline)) void net_batch(int out, int in, long n) {
  for (long i = 0; i < n; i++) {
    if (write(out, buf, sizeof(buf)) != sizeof(buf)) exit(4);
    if (read(in, buf, sizeof(buf)) != sizeof(buf)) exit(4);
  }
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: net_workload tcp|unix|pipe N\n");
    return 2;
  }
  long n = atol(argv[2]);
  int fd[2];
  if (!strcmp(argv[1], "tcp")) tcp_pair(fd);
  else if (!strcmp(argv[1], "unix")) {
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, fd)) return 3;
  } else if (pipe(fd)) return 3;
  /* pipe(): fd[1] writes, fd[0] reads; the sockets either way. */
  long long t0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_THREAD_CPUTIME_ID);
  net_batch(fd[1], fd[0], n);
  long long t1 = now(CLOCK_MONOTONIC), c1 = now(CLOCK_THREAD_CPUTIME_ID);
  printf("messages=%ld\nns_per_msg=%.1f\ncpu_ns_per_msg=%.1f\n", 2 * n,
         (double)(t1 - t0) / (2.0 * n), (double)(c1 - c0) / (2.0 * n));
  return 0;
}
