/* target_pipeline: a program whose every hand-off is known, for the flow
 * graph's tests (atrace report --flows, issue 34).
 *
 *   target_pipeline [N] [--isolated]      (N: records, 400; a multiple of 8)
 *
 * Pipeline (default): three threads of work in two processes.
 * Threads are named producer, transformer and consumer.
 *   producer thread     make_record() returns a new record (malloc), which
 *                       put_record() hands to the transformer: one pointer
 *                       through a one-slot mailbox, and one futex wake-up of
 *                       the transformer asleep in take_record() (the
 *                       producer waits until it is asleep, so every hand-off
 *                       wakes it exactly once)
 *   transformer thread  take_record(), transform(record), then every 8
 *                       records emit_batch() writes them (8 x 64 bytes) into
 *                       a pipe in one write, and await_answer() waits for
 *                       the consumer's 8-byte answer on a unix socket
 *   consumer (child)    read_batch() reads each batch (512 bytes, one read
 *                       per write: pipe writes up to PIPE_BUF are atomic),
 *                       answer() sends 8 bytes back
 * So: N pointers make_record -> transform and make_record -> put_record,
 * N wake-ups put_record -> take_record, N/8 pipe messages of 512 bytes
 * emit_batch -> read_batch, N/8 socket messages of 8 bytes answer ->
 * await_answer. The threads do comparable work per record (spin()).
 *
 * --isolated: two groups of two threads, each a producer and a taker
 * handing N pointers through a mailbox of its own as above (iso_make ->
 * iso_take, iso_put -> iso_take's wake-ups, iso_make -> iso_use), and
 * nothing at all between the groups: threads a-make, a-take, b-make, b-take.
 *
 * Waiting is by spinning with sched_yield(), never by sleeping: a timer's
 * wake-up would be one more wake-up, charged to whatever thread ran when
 * it fired. Prints "records=N batches=N/8". */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "target_common.h"

#define RECORD_BYTES 64
#define BATCH 8

struct record {
  long seq;
  char data[RECORD_BYTES - sizeof(long)];
};

/* A one-slot mailbox: the taker says it waits, sleeps on `full`; the putter
 * waits until it sleeps, fills the slot and wakes it. */
struct mailbox {
  _Atomic int full;
  _Atomic int waiting;
  _Atomic pid_t taker_tid;
  struct record* item;
};

static long n_records = 400;
static volatile long sink;

static void die(const char* what) {
  perror(what);
  exit(3);
}

static void spin(long n) {
  for (long i = 0; i < n; i++) sink += i;
}

/* Whether thread `tid` of this process is asleep (state S). */
static int asleep(pid_t tid) {
  char path[64], buf[256];
  snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
  int fd = open(path, O_RDONLY);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = 0;
  const char* p = strrchr(buf, ')');
  return p && p[1] == ' ' && p[2] == 'S';
}

static void mailbox_put(struct mailbox* m, struct record* r) {
  while (!(atomic_load(&m->waiting) && asleep(atomic_load(&m->taker_tid)))) sched_yield();
  m->item = r;
  atomic_store(&m->full, 1);
  syscall(SYS_futex, &m->full, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
  while (atomic_load(&m->full)) sched_yield(); /* taken */
}

static struct record* mailbox_take(struct mailbox* m) {
  atomic_store(&m->taker_tid, (pid_t)syscall(SYS_gettid));
  atomic_store(&m->waiting, 1);
  while (!atomic_load(&m->full))
    syscall(SYS_futex, &m->full, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
  atomic_store(&m->waiting, 0);
  struct record* r = m->item;
  atomic_store(&m->full, 0);
  return r;
}

/* ---- the pipeline ---- */

static struct mailbox box;
static int pipe_fd[2], sock_fd[2];

TRACED struct record* make_record(long seq) {
  struct record* r = malloc(sizeof *r);
  if (!r) die("malloc");
  r->seq = seq;
  memset(r->data, (int)(seq & 0x7f), sizeof r->data);
  spin(20000);
  return r;
}

TRACED void put_record(struct record* r) {
  mailbox_put(&box, r);
  TARGET_BARRIER();
}

TRACED struct record* take_record(struct mailbox* m) {
  struct record* r = mailbox_take(m);
  TARGET_BARRIER();
  return r;
}

TRACED void transform(struct record* r) {
  for (size_t i = 0; i < sizeof r->data; i++) r->data[i] ^= 0x5a;
  spin(20000);
}

TRACED void emit_batch(int fd, const char* buf, size_t n) {
  if (write(fd, buf, n) != (ssize_t)n) die("write");
  TARGET_BARRIER();
}

TRACED void await_answer(int fd) {
  char a[8];
  if (recv(fd, a, sizeof a, MSG_WAITALL) != (ssize_t)sizeof a) die("recv");
  TARGET_BARRIER();
}

TRACED void read_batch(int fd, char* buf, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t k = read(fd, buf + got, n - got);
    if (k <= 0) die("read");
    got += (size_t)k;
  }
  spin(20000 * BATCH);
}

TRACED void answer(int fd) {
  char a[8] = "ok";
  if (send(fd, a, sizeof a, 0) != (ssize_t)sizeof a) die("send");
  TARGET_BARRIER();
}

static void* producer(void* arg) {
  (void)arg;
  prctl(PR_SET_NAME, "producer");
  for (long i = 0; i < n_records; i++) put_record(make_record(i));
  return NULL;
}

static void* transformer(void* arg) {
  (void)arg;
  prctl(PR_SET_NAME, "transformer");
  static char batch[BATCH * RECORD_BYTES];
  for (long i = 0; i < n_records; i++) {
    struct record* r = take_record(&box);
    transform(r);
    memcpy(batch + (i % BATCH) * RECORD_BYTES, r, RECORD_BYTES);
    free(r);
    if (i % BATCH == BATCH - 1) {
      emit_batch(pipe_fd[1], batch, sizeof batch);
      await_answer(sock_fd[0]);
    }
  }
  return NULL;
}

static void consumer(void) {
  prctl(PR_SET_NAME, "consumer");
  static char batch[BATCH * RECORD_BYTES];
  for (long b = 0; b < n_records / BATCH; b++) {
    read_batch(pipe_fd[0], batch, sizeof batch);
    answer(sock_fd[1]);
  }
}

static void run_pipeline(void) {
  if (pipe(pipe_fd) != 0) die("pipe");
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sock_fd) != 0) die("socketpair");
  pid_t child = fork();
  if (child < 0) die("fork");
  if (child == 0) {
    consumer();
    _exit(0);
  }
  pthread_t p, t;
  if (pthread_create(&t, NULL, transformer, NULL) != 0) die("pthread_create");
  if (pthread_create(&p, NULL, producer, NULL) != 0) die("pthread_create");
  pthread_join(p, NULL);
  pthread_join(t, NULL);
  int status = 0;
  if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    die("consumer");
}

/* ---- two groups that never meet ---- */

struct group {
  const char *name_make, *name_take; /* thread names: "a-make", "a-take", "b-..." */
  struct mailbox box;
  pthread_t maker, taker;
};

TRACED struct record* iso_make(long seq) {
  struct record* r = malloc(sizeof *r);
  if (!r) die("malloc");
  r->seq = seq;
  spin(20000);
  return r;
}

TRACED void iso_put(struct mailbox* m, struct record* r) {
  mailbox_put(m, r);
  TARGET_BARRIER();
}

TRACED struct record* iso_take(struct mailbox* m) {
  struct record* r = mailbox_take(m);
  TARGET_BARRIER();
  return r;
}

TRACED void iso_use(struct record* r) {
  sink += r->seq;
  spin(20000);
}

static void* iso_maker(void* arg) {
  struct group* g = arg;
  prctl(PR_SET_NAME, g->name_make);
  for (long i = 0; i < n_records; i++) iso_put(&g->box, iso_make(i));
  return NULL;
}

static void* iso_taker(void* arg) {
  struct group* g = arg;
  prctl(PR_SET_NAME, g->name_take);
  for (long i = 0; i < n_records; i++) {
    struct record* r = iso_take(&g->box);
    iso_use(r);
    free(r);
  }
  return NULL;
}

static void run_isolated(void) {
  static struct group g[2] = {{.name_make = "a-make", .name_take = "a-take"},
                              {.name_make = "b-make", .name_take = "b-take"}};
  for (int i = 0; i < 2; i++) {
    if (pthread_create(&g[i].taker, NULL, iso_taker, &g[i]) != 0) die("pthread_create");
    if (pthread_create(&g[i].maker, NULL, iso_maker, &g[i]) != 0) die("pthread_create");
  }
  for (int i = 0; i < 2; i++) {
    pthread_join(g[i].maker, NULL);
    pthread_join(g[i].taker, NULL);
  }
}

int main(int argc, char** argv) {
  target_line_buffered();
  n_records = target_count_arg(argc, argv, 0, 400);
  if (n_records % BATCH != 0) {
    fprintf(stderr, "%s: N must be a multiple of %d\n", argv[0], BATCH);
    return 2;
  }
  int isolated = 0;
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--isolated") == 0) isolated = 1;
  if (isolated)
    run_isolated();
  else
    run_pipeline();
  printf("records=%ld batches=%ld\n", n_records, n_records / BATCH);
  return target_exit_code(argc, argv);
}
