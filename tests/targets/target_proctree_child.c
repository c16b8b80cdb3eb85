/* target_proctree_child: the program target_proctree's children exec, and
 * either side of a shell pipeline (issue 32).
 *
 *   target_proctree_child N [--drain] [--tag=X]
 *
 *   tree_step()   1    calls tree_leaf() N times
 *   tree_leaf()   N
 *   tree_line()   one per line read from stdin with --drain (to its end,
 *                 before anything else: the right side of a pipeline,
 *                 so that the left side never writes into a closed pipe)
 *
 * Prints "pid=P", "tree_leaf=N" and with --drain "tree_line=L". */
#include <unistd.h>

#include "target_common.h"

static volatile unsigned long sink;

TRACED void tree_leaf(void) {
  sink = sink * 31u + 7u;
  TARGET_BARRIER();
}

TRACED void tree_step(long n) {
  for (long i = 0; i < n; ++i) {
    tree_leaf();
    TARGET_BARRIER();
  }
}

TRACED void tree_line(void) {
  sink = sink * 31u + 3u;
  TARGET_BARRIER();
}

int main(int argc, char** argv) {
  target_line_buffered();
  const long n = target_count_arg(argc, argv, 0, 1);
  long lines = -1;
  for (int i = 1; i < argc; ++i)
    if (strcmp(argv[i], "--drain") == 0) lines = 0;
  if (lines == 0) {
    char buf[512];
    while (fgets(buf, sizeof buf, stdin)) {
      tree_line();
      ++lines;
    }
  }
  printf("pid=%d\n", (int)getpid());
  tree_step(n);
  printf("tree_leaf=%ld\n", n);
  if (lines >= 0) printf("tree_line=%ld\n", lines);
  return 0;
}
