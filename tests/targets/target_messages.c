/* target_messages: exact message exchanges over loopback and local
 * channels, for the net group's tests (record --kernel=+net).
 *
 *   target_messages [N] [--tag=X]        (N: exchanges per channel, 100)
 *
 * main sets every channel up, then fork()s: the child serves, the parent
 * is the client, each side in its own traced functions, in lockstep (each
 * request is answered before the next), so every send and receive moves
 * exactly one message:
 *   tcp_client / tcp_server    over 127.0.0.1, then again over [::1]:
 *                              N requests of 100 bytes, N answers of 200
 *                              (receives with MSG_WAITALL: one call each)
 *   udp_client / udp_server    N datagrams of 50 bytes to a socket bound to
 *                              127.0.0.1 (sendto), N answers of 60 (recvfrom)
 *   unix_client / unix_server  a socketpair(AF_UNIX, SOCK_STREAM):
 *                              N messages of 30 bytes, N answers of 40
 *   pipe_client / pipe_server  N writes of 10 bytes on one pipe, each
 *                              acknowledged by 1 byte on another
 * and prints the ports, one "key=value" a line. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "target_common.h"

#define TCP_REQ 100
#define TCP_RESP 200
#define UDP_REQ 50
#define UDP_RESP 60
#define UNIX_REQ 30
#define UNIX_RESP 40
#define PIPE_MSG 10

static long n_exchanges = 100;
static char buf[4096];

static void die(const char* what) {
  perror(what);
  exit(3);
}

static void send_all(int fd, size_t n) {
  if (send(fd, buf, n, 0) != (ssize_t)n) die("send");
}

static void recv_all(int fd, size_t n) {
  if (recv(fd, buf, n, MSG_WAITALL) != (ssize_t)n) die("recv");
}

TRACED void tcp_client(int fd) {
  for (long i = 0; i < n_exchanges; i++) {
    send_all(fd, TCP_REQ);
    recv_all(fd, TCP_RESP);
  }
  TARGET_BARRIER();
}

TRACED void tcp_server(int fd) {
  for (long i = 0; i < n_exchanges; i++) {
    recv_all(fd, TCP_REQ);
    send_all(fd, TCP_RESP);
  }
  TARGET_BARRIER();
}

TRACED void udp_client(int fd, const struct sockaddr_in* server) {
  struct sockaddr_in from;
  for (long i = 0; i < n_exchanges; i++) {
    if (sendto(fd, buf, UDP_REQ, 0, (const struct sockaddr*)server, sizeof(*server)) != UDP_REQ)
      die("sendto");
    socklen_t len = sizeof(from);
    if (recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr*)&from, &len) != UDP_RESP)
      die("recvfrom");
  }
  TARGET_BARRIER();
}

TRACED void udp_server(int fd) {
  struct sockaddr_in from;
  for (long i = 0; i < n_exchanges; i++) {
    socklen_t len = sizeof(from);
    if (recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr*)&from, &len) != UDP_REQ)
      die("recvfrom");
    if (sendto(fd, buf, UDP_RESP, 0, (struct sockaddr*)&from, len) != UDP_RESP) die("sendto");
  }
  TARGET_BARRIER();
}

TRACED void unix_client(int fd) {
  for (long i = 0; i < n_exchanges; i++) {
    send_all(fd, UNIX_REQ);
    recv_all(fd, UNIX_RESP);
  }
  TARGET_BARRIER();
}

TRACED void unix_server(int fd) {
  for (long i = 0; i < n_exchanges; i++) {
    recv_all(fd, UNIX_REQ);
    send_all(fd, UNIX_RESP);
  }
  TARGET_BARRIER();
}

/* Writes of at most PIPE_BUF bytes are atomic and the reader asks for
 * exactly one: one read per write. */
TRACED void pipe_client(int out, int ack) {
  for (long i = 0; i < n_exchanges; i++) {
    if (write(out, buf, PIPE_MSG) != PIPE_MSG) die("write");
    if (read(ack, buf, 1) != 1) die("read");
  }
  TARGET_BARRIER();
}

TRACED void pipe_server(int in, int ack) {
  for (long i = 0; i < n_exchanges; i++) {
    if (read(in, buf, PIPE_MSG) != PIPE_MSG) die("read");
    if (write(ack, buf, 1) != 1) die("write");
  }
  TARGET_BARRIER();
}

/* A listening socket on the loopback address of `family`, any port. */
static int listener(int family, unsigned* port) {
  int fd = socket(family, SOCK_STREAM, 0);
  struct sockaddr_storage ss = {0};
  socklen_t len;
  if (fd < 0) die("socket");
  if (family == AF_INET) {
    struct sockaddr_in* a = (struct sockaddr_in*)&ss;
    a->sin_family = AF_INET;
    a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    len = sizeof(*a);
  } else {
    struct sockaddr_in6* a = (struct sockaddr_in6*)&ss;
    a->sin6_family = AF_INET6;
    a->sin6_addr = in6addr_loopback;
    len = sizeof(*a);
  }
  if (bind(fd, (struct sockaddr*)&ss, len) || listen(fd, 1)) die("bind/listen");
  if (getsockname(fd, (struct sockaddr*)&ss, &len)) die("getsockname");
  *port = ntohs(family == AF_INET ? ((struct sockaddr_in*)&ss)->sin_port
                                  : ((struct sockaddr_in6*)&ss)->sin6_port);
  return fd;
}

static int connect_to(int family, unsigned port) {
  int fd = socket(family, SOCK_STREAM, 0);
  struct sockaddr_storage ss = {0};
  socklen_t len;
  if (family == AF_INET) {
    struct sockaddr_in* a = (struct sockaddr_in*)&ss;
    a->sin_family = AF_INET;
    a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a->sin_port = htons((unsigned short)port);
    len = sizeof(*a);
  } else {
    struct sockaddr_in6* a = (struct sockaddr_in6*)&ss;
    a->sin6_family = AF_INET6;
    a->sin6_addr = in6addr_loopback;
    a->sin6_port = htons((unsigned short)port);
    len = sizeof(*a);
  }
  if (fd < 0 || connect(fd, (struct sockaddr*)&ss, len)) die("connect");
  return fd;
}

/* A UDP socket bound to 127.0.0.1, any port: both ends name their address. */
static int udp_socket(struct sockaddr_in* addr) {
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  socklen_t len = sizeof(*addr);
  memset(addr, 0, sizeof(*addr));
  addr->sin_family = AF_INET;
  addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || bind(fd, (struct sockaddr*)addr, len) ||
      getsockname(fd, (struct sockaddr*)addr, &len))
    die("udp socket");
  return fd;
}

int main(int argc, char** argv) {
  n_exchanges = target_count_arg(argc, argv, 0, 100);
  unsigned port4, port6;
  int l4 = listener(AF_INET, &port4), l6 = listener(AF_INET6, &port6);
  struct sockaddr_in udp_server_addr, udp_client_addr;
  int us = udp_socket(&udp_server_addr), uc = udp_socket(&udp_client_addr);
  int pair[2], to_server[2], to_client[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, pair) || pipe(to_server) || pipe(to_client))
    die("socketpair/pipe");
  printf("tcp4_port=%u\ntcp6_port=%u\nudp_server_port=%u\nudp_client_port=%u\n", port4, port6,
         ntohs(udp_server_addr.sin_port), ntohs(udp_client_addr.sin_port));
  fflush(stdout);

  pid_t child = fork();
  if (child < 0) die("fork");
  if (child == 0) {
    for (int i = 0; i < 2; i++) {
      int c = accept(i == 0 ? l4 : l6, NULL, NULL);
      if (c < 0) die("accept");
      tcp_server(c);
      close(c);
    }
    udp_server(us);
    unix_server(pair[1]);
    pipe_server(to_server[0], to_client[1]);
    _exit(0);
  }
  for (int i = 0; i < 2; i++) {
    int c = connect_to(i == 0 ? AF_INET : AF_INET6, i == 0 ? port4 : port6);
    tcp_client(c);
    close(c);
  }
  udp_client(uc, &udp_server_addr);
  unix_client(pair[0]);
  pipe_client(to_server[1], to_client[0]);
  int status = 0;
  if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    die("child");
  printf("exchanges=%ld\n", n_exchanges);
  return target_exit_code(argc, argv);
}
