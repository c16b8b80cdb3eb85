/* link_count.h: the uprobe_multi links of atrace's function programs
 * (func_entry, func_exit) that hold process PID, and the probes they hold,
 * read from the kernel (bpf(BPF_LINK_GET_NEXT_ID) and each link's info;
 * root). One place for bench/count_links.c (sampled by
 * bench/detach_scale.sh) and tests/targets/target_detach_scale.c (which
 * counts its own at its end). */
#ifndef ATRACE_BENCH_LINK_COUNT_H
#define ATRACE_BENCH_LINK_COUNT_H

#include <errno.h>
#include <linux/bpf.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static long link_count_bpf(int cmd, union bpf_attr* attr) {
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
enum { kLinkTypeUprobeMulti = 12 };

static int link_count_info(int fd, void* buf, uint32_t len) {
  union bpf_attr a;
  memset(&a, 0, sizeof a);
  a.info.bpf_fd = (uint32_t)fd;
  a.info.info_len = len;
  a.info.info = (uint64_t)(uintptr_t)buf;
  return (int)link_count_bpf(BPF_OBJ_GET_INFO_BY_FD, &a);
}

/* 0 with the counts, -1 (errno set) when the kernel's link ids cannot be
 * walked. Links or programs gone meanwhile are skipped. */
static int count_atrace_links(uint32_t pid, unsigned* links, unsigned* probes) {
  union bpf_attr a;
  uint32_t id = 0;
  *links = *probes = 0;
  for (;;) {
    memset(&a, 0, sizeof a);
    a.start_id = id;
    if (link_count_bpf(BPF_LINK_GET_NEXT_ID, &a) != 0) return errno == ENOENT ? 0 : -1;
    id = a.next_id;
    memset(&a, 0, sizeof a);
    a.link_id = id;
    int fd = (int)link_count_bpf(BPF_LINK_GET_FD_BY_ID, &a);
    if (fd < 0) continue;
    struct link_info_multi li;
    memset(&li, 0, sizeof li);
    int r = link_count_info(fd, &li, sizeof li);
    close(fd);
    if (r != 0 || li.type != kLinkTypeUprobeMulti || li.pid != pid) continue;
    memset(&a, 0, sizeof a);
    a.prog_id = li.prog_id;
    int pfd = (int)link_count_bpf(BPF_PROG_GET_FD_BY_ID, &a);
    if (pfd < 0) continue;
    struct bpf_prog_info pi;
    memset(&pi, 0, sizeof pi);
    r = link_count_info(pfd, &pi, sizeof pi);
    close(pfd);
    if (r != 0 || (strcmp(pi.name, "func_entry") != 0 && strcmp(pi.name, "func_exit") != 0))
      continue;
    ++*links;
    *probes += li.count;
  }
}

#endif
