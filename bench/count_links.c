/* count_links: the uprobe_multi links of atrace's function programs
 * (func_entry, func_exit) that hold process PID, and the probes they hold,
 * from the kernel (bpf(BPF_LINK_GET_NEXT_ID) and each link's info; root).
 * bench/detach_scale.sh samples it while a program runs.
 *
 *   count_links PID     prints "LINKS PROBES" */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/bpf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static long sys_bpf(int cmd, union bpf_attr* attr) {
  return syscall(SYS_bpf, cmd, attr, sizeof(*attr));
}

/* struct bpf_link_info's uprobe_multi part (Linux 6.6+), spelled out: the
 * build host's headers may predate it. */
struct link_info_multi {
  uint32_t type, id, prog_id, pad;
  uint64_t path, offsets, ref_ctr_offsets, cookies;
  uint32_t path_size, count, flags, pid;
  uint8_t rest[64];
};

static int info(int fd, void* buf, uint32_t len) {
  union bpf_attr a;
  memset(&a, 0, sizeof a);
  a.info.bpf_fd = (uint32_t)fd;
  a.info.info_len = len;
  a.info.info = (uint64_t)(uintptr_t)buf;
  return (int)sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: count_links PID\n");
    return 2;
  }
  uint32_t pid = (uint32_t)atoi(argv[1]), id = 0;
  unsigned links = 0, probes = 0;
  union bpf_attr a;
  for (;;) {
    memset(&a, 0, sizeof a);
    a.start_id = id;
    if (sys_bpf(BPF_LINK_GET_NEXT_ID, &a) != 0) {
      if (errno == ENOENT) break;
      perror("count_links");
      return 1;
    }
    id = a.next_id;
    memset(&a, 0, sizeof a);
    a.link_id = id;
    int fd = (int)sys_bpf(BPF_LINK_GET_FD_BY_ID, &a);
    if (fd < 0) continue;
    struct link_info_multi li;
    memset(&li, 0, sizeof li);
    int r = info(fd, &li, sizeof li);
    close(fd);
    if (r != 0 || li.type != 12 /* BPF_LINK_TYPE_UPROBE_MULTI */ || li.pid != pid) continue;
    memset(&a, 0, sizeof a);
    a.prog_id = li.prog_id;
    int pfd = (int)sys_bpf(BPF_PROG_GET_FD_BY_ID, &a);
    if (pfd < 0) continue;
    struct bpf_prog_info pi;
    memset(&pi, 0, sizeof pi);
    r = info(pfd, &pi, sizeof pi);
    close(pfd);
    if (r != 0 || (strcmp(pi.name, "func_entry") != 0 && strcmp(pi.name, "func_exit") != 0))
      continue;
    ++links;
    probes += li.count;
  }
  printf("%u %u\n", links, probes);
  return 0;
}
