/* count_links: the uprobe_multi links of atrace's function programs that
 * hold process PID, and the probes they hold (link_count.h; root).
 * bench/detach_scale.sh samples it while a program runs.
 *
 *   count_links PID     prints "LINKS PROBES" */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>

#include "link_count.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: count_links PID\n");
    return 2;
  }
  unsigned links = 0, probes = 0;
  if (count_atrace_links((uint32_t)atoi(argv[1]), &links, &probes) != 0) {
    perror("count_links");
    return 1;
  }
  printf("%u %u\n", links, probes);
  return 0;
}
