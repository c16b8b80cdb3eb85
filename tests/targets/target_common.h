/* Shared by the target programs: keeps traced functions real, out-of-line
 * calls and gives every target the same small command-line conventions.
 * C and C++ both include it. */
#ifndef ATRACE_TARGET_COMMON_H
#define ATRACE_TARGET_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A traced function must stay a symbol of its own that is entered by a call
 * and left by a ret: no inlining, no constprop/isra clones (they would rename
 * the symbol "leaf.constprop.0"), no identical-code folding. GCC's noipa says
 * all of that; clang has no noipa, noinline is the closest. */
#if defined(__clang__)
#define TRACED __attribute__((noinline, used))
#else
#define TRACED __attribute__((noipa, used))
#endif

/* A compiler barrier: the optimizer may neither drop nor merge the calls
 * around it, nor turn the call before it into a tail jump (a tail call would
 * make the caller's uretprobe fire at the callee's return). */
#define TARGET_BARRIER() __asm__ volatile("" ::: "memory")

/* Options every target accepts after its own positional arguments:
 *   --exit=N   exit with status N after printing (exit-status pass-through test)
 *   --tag=X    ignored; lets a test find its own processes in /proc          */
static inline int target_exit_code(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (strncmp(argv[i], "--exit=", 7) == 0) return atoi(argv[i] + 7);
  return 0;
}

/* The n-th positional argument (options skipped) as a positive count. */
static inline long target_count_arg(int argc, char** argv, int n, long fallback) {
  int seen = 0;
  for (int i = 1; i < argc; ++i) {
    if (strncmp(argv[i], "--", 2) == 0) continue;
    if (seen++ == n) {
      char* end = NULL;
      long v = strtol(argv[i], &end, 10);
      if (end == argv[i] || *end != '\0' || v < 0) {
        fprintf(stderr, "%s: bad count '%s'\n", argv[0], argv[i]);
        exit(2);
      }
      return v;
    }
  }
  return fallback;
}

/* Line-buffered stdout even into a pipe, so a test reading it sees each line
 * as soon as it is printed. */
static inline void target_line_buffered(void) { setvbuf(stdout, NULL, _IOLBF, 0); }

#endif
