/* link_cost: what creating and closing one uprobe_multi link costs, by the
 * number of probes it holds (bench/link_cost.sh). Raw bpf(2): a program
 * that returns 0 at once, loaded for uprobe_multi, attached to the first N
 * of the offsets read from stdin in PATH, limited to process PID, then
 * closed; each N ROUNDS times.
 *
 *   link_cost PATH PID ROUNDS N... < offsets
 *
 * Prints "N create_us close_us" per round. The close is timed to its
 * return: the probes' removal and the kernel's grace-period waits
 * (uprobe_unregister_sync). PID must not be hitting the probes (no pending
 * return holds uretprobes_srcu then: record/detacher.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum {
  kProgLoad = 5,
  kLinkCreate = 28,
  kProgTypeKprobe = 2,
  kTraceUprobeMulti = 48,
};

static long sys_bpf(int cmd, void* attr, unsigned size) { return syscall(SYS_bpf, cmd, attr, size); }

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int load_prog(void) {
  /* r0 = 0; exit */
  static const uint64_t insns[2] = {0x00000000000000b7ull, 0x0000000000000095ull};
  static const char license[] = "GPL";
  unsigned char attr[144];
  memset(attr, 0, sizeof attr);
  uint32_t* u = (uint32_t*)attr;
  u[0] = kProgTypeKprobe;                           /* prog_type */
  u[1] = 2;                                         /* insn_cnt */
  *(uint64_t*)(attr + 8) = (uintptr_t)insns;        /* insns */
  *(uint64_t*)(attr + 16) = (uintptr_t)license;     /* license */
  *(uint32_t*)(attr + 68) = kTraceUprobeMulti;      /* expected_attach_type */
  return (int)sys_bpf(kProgLoad, attr, sizeof attr);
}

static int link_multi(int prog, const char* path, const uint64_t* offsets, uint32_t n, pid_t pid) {
  unsigned char attr[144];
  memset(attr, 0, sizeof attr);
  *(uint32_t*)(attr + 0) = (uint32_t)prog;
  *(uint32_t*)(attr + 8) = kTraceUprobeMulti;
  *(uint64_t*)(attr + 16) = (uintptr_t)path;
  *(uint64_t*)(attr + 24) = (uintptr_t)offsets;
  *(uint32_t*)(attr + 48) = n;
  *(uint32_t*)(attr + 56) = (uint32_t)pid;
  return (int)sys_bpf(kLinkCreate, attr, sizeof attr);
}

/* Keeps the offsets the kernel can probe (one refused fails a whole link:
 * halving finds them in a few attempts, as record/attach.cpp does). */
static size_t keep_probeable(int prog, const char* path, pid_t pid, uint64_t* o, size_t n,
                             uint64_t* out) {
  if (n == 0) return 0;
  int fd = link_multi(prog, path, o, (uint32_t)n, pid);
  if (fd >= 0) {
    close(fd);
    memcpy(out, o, n * sizeof *o);
    return n;
  }
  if (n == 1) return 0;
  size_t a = keep_probeable(prog, path, pid, o, n / 2, out);
  return a + keep_probeable(prog, path, pid, o + n / 2, n - n / 2, out + a);
}

int main(int argc, char** argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: link_cost PATH PID ROUNDS N... < offsets\n");
    return 2;
  }
  const char* path = argv[1];
  pid_t pid = (pid_t)atoi(argv[2]);
  int rounds = atoi(argv[3]);
  uint64_t* offs = NULL;
  size_t n = 0, cap = 0;
  unsigned long long v;
  while (scanf("%llx", &v) == 1) {
    if (n == cap) offs = realloc(offs, (cap = cap ? cap * 2 : 1024) * sizeof *offs);
    offs[n++] = v;
  }
  int prog = load_prog();
  if (prog < 0) {
    fprintf(stderr, "link_cost: program load: %s\n", strerror(errno));
    return 1;
  }
  uint64_t* ok = malloc((n ? n : 1) * sizeof *ok);
  n = keep_probeable(prog, path, pid, offs, n, ok);
  offs = ok;
  fprintf(stderr, "link_cost: %zu probeable functions\n", n);
  for (int r = 0; r < rounds; ++r)
    for (int a = 4; a < argc; ++a) {
      uint32_t k = (uint32_t)atoi(argv[a]);
      if (k > n) k = (uint32_t)n;
      uint64_t t0 = now_ns();
      int fd = link_multi(prog, path, offs, k, pid);
      uint64_t t1 = now_ns();
      if (fd < 0) {
        fprintf(stderr, "link_cost: %u probes: %s\n", k, strerror(errno));
        return 1;
      }
      close(fd);
      uint64_t t2 = now_ns();
      printf("%u %.1f %.1f\n", k, (double)(t1 - t0) / 1e3, (double)(t2 - t1) / 1e3);
      fflush(stdout);
    }
  return 0;
}
