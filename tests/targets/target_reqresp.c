/* target_reqresp: a TCP client and a server in separate processes (or on
 * separate hosts), for the merge tests of issue 32: each side is recorded
 * by its own atrace and the two traces are merged.
 *
 *   target_reqresp server PORT N [FIFO]
 *   target_reqresp client ADDR PORT N [FIFO]
 *
 * The server listens on PORT (IPv4, any address; 0: one the kernel picks),
 * prints "ready port=PORT" once listening, accepts one connection and serves N requests: each
 * serve_request receives one 64-byte request (MSG_WAITALL: one call) and
 * sends one 128-byte answer (one call). The client connects to ADDR:PORT
 * (retrying for up to 60 s, so the start order does not matter: in the
 * two-host test the other guest may still be booting) and makes N
 * exchanges, each send_request one 64-byte send and one 128-byte receive.
 * Lockstep: each request is answered before the next is sent, so every
 * send and receive moves exactly one message.
 *
 * With FIFO (a named pipe, which the caller creates), after the TCP
 * exchanges the client opens it for writing and makes N write_fifo calls
 * (one 16-byte write each); the server opens it for reading and makes N
 * read_fifo calls (one 16-byte read each: pipe writes of 16 bytes are
 * atomic, so each read returns one whole message).
 *
 * Each side prints its counts ("requests=N", "fifo_messages=N"). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "target_common.h"

#define REQUEST_BYTES 64
#define ANSWER_BYTES 128
#define FIFO_BYTES 16
#define CONNECT_SECONDS 60

static char buf[256];

static void die(const char* what) {
  perror(what);
  exit(3);
}

static long count_of(const char* s) {
  char* end = NULL;
  long v = strtol(s, &end, 10);
  if (end == s || *end != '\0' || v < 0) {
    fprintf(stderr, "target_reqresp: bad number '%s'\n", s);
    exit(2);
  }
  return v;
}

static void send_exactly(int fd, size_t n) {
  if (send(fd, buf, n, 0) != (ssize_t)n) die("send");
}

static void recv_exactly(int fd, size_t n) {
  if (recv(fd, buf, n, MSG_WAITALL) != (ssize_t)n) die("recv");
}

/* One exchange, server side: a request in, an answer out. */
TRACED void serve_request(int fd) {
  recv_exactly(fd, REQUEST_BYTES);
  send_exactly(fd, ANSWER_BYTES);
  TARGET_BARRIER();
}

/* One exchange, client side: a request out, its answer in. */
TRACED void send_request(int fd) {
  send_exactly(fd, REQUEST_BYTES);
  recv_exactly(fd, ANSWER_BYTES);
  TARGET_BARRIER();
}

TRACED void write_fifo(int fd) {
  if (write(fd, buf, FIFO_BYTES) != FIFO_BYTES) die("write fifo");
  TARGET_BARRIER();
}

TRACED void read_fifo(int fd) {
  if (read(fd, buf, FIFO_BYTES) != FIFO_BYTES) die("read fifo");
  TARGET_BARRIER();
}

/* Small requests in lockstep: without TCP_NODELAY Nagle would hold each
 * one back until the previous answer's ACK (no effect on the counts, but
 * 40 ms delayed ACKs would make 1000 exchanges take a minute). */
static void no_delay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static int server(long port, long n, const char* fifo) {
  int l = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  struct sockaddr_in sa;
  memset(&sa, 0, sizeof(sa));
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_ANY);
  sa.sin_port = htons((unsigned short)port);
  if (l < 0 || bind(l, (struct sockaddr*)&sa, sizeof(sa)) || listen(l, 1)) die("bind/listen");
  /* PORT 0: the kernel's choice, printed (tests on one host run in parallel). */
  socklen_t len = sizeof(sa);
  if (getsockname(l, (struct sockaddr*)&sa, &len)) die("getsockname");
  printf("ready port=%u\n", (unsigned)ntohs(sa.sin_port));
  fflush(stdout);
  int fd = accept(l, NULL, NULL);
  if (fd < 0) die("accept");
  close(l);
  no_delay(fd);
  for (long i = 0; i < n; i++) serve_request(fd);
  close(fd);
  printf("requests=%ld\n", n);
  if (fifo) {
    int f = open(fifo, O_RDONLY);
    if (f < 0) die("open fifo");
    for (long i = 0; i < n; i++) read_fifo(f);
    close(f);
    printf("fifo_messages=%ld\n", n);
  }
  return 0;
}

static int connect_retrying(const char* addr, long port) {
  struct sockaddr_in sa;
  memset(&sa, 0, sizeof(sa));
  sa.sin_family = AF_INET;
  sa.sin_port = htons((unsigned short)port);
  if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
    fprintf(stderr, "target_reqresp: bad IPv4 address '%s'\n", addr);
    exit(2);
  }
  struct timespec pause = {0, 50 * 1000 * 1000}, now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  time_t deadline = now.tv_sec + CONNECT_SECONDS;
  for (;;) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) die("socket");
    if (connect(fd, (struct sockaddr*)&sa, sizeof(sa)) == 0) return fd;
    int e = errno;
    close(fd);
    if (e != ECONNREFUSED && e != ENETUNREACH && e != EHOSTUNREACH && e != ETIMEDOUT) {
      errno = e;
      die("connect");
    }
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec >= deadline) break;
    nanosleep(&pause, NULL);
  }
  fprintf(stderr, "target_reqresp: no server at %s:%ld after %d s\n", addr, port, CONNECT_SECONDS);
  exit(3);
}

static int client(const char* addr, long port, long n, const char* fifo) {
  int fd = connect_retrying(addr, port);
  no_delay(fd);
  for (long i = 0; i < n; i++) send_request(fd);
  close(fd);
  printf("requests=%ld\n", n);
  if (fifo) {
    int f = open(fifo, O_WRONLY);
    if (f < 0) die("open fifo");
    for (long i = 0; i < n; i++) write_fifo(f);
    close(f);
    printf("fifo_messages=%ld\n", n);
  }
  return 0;
}

int main(int argc, char** argv) {
  target_line_buffered();
  memset(buf, 'r', sizeof(buf));
  if (argc >= 4 && argc <= 5 && strcmp(argv[1], "server") == 0)
    return server(count_of(argv[2]), count_of(argv[3]), argc == 5 ? argv[4] : NULL);
  if (argc >= 5 && argc <= 6 && strcmp(argv[1], "client") == 0)
    return client(argv[2], count_of(argv[3]), count_of(argv[4]), argc == 6 ? argv[5] : NULL);
  fprintf(stderr,
          "usage: target_reqresp server PORT N [FIFO]\n"
          "       target_reqresp client ADDR PORT N [FIFO]\n");
  return 2;
}
