/* Functions whose parameters record --args=FUNC@auto names and types from
 * the debug information (issue 20): integers of several widths and signs, a
 * char*, a pointer, a double (an XMM register: left out) and a function of
 * a file built without debug information (dwarf_nodebug.c). Each result is
 * printed (tests/integration/test_stacks.cpp, Dwarf suite). */
#include "target_common.h"

int dw_nodebug(int x); /* dwarf_nodebug.c, built with -g0 */

TRACED long dw_mixed(int count, const char* name, short delta, unsigned char flag, void* where,
                     long long big) {
  TARGET_BARRIER();
  return count + (long)strlen(name) + delta + flag + (where ? 1 : 0) + (long)(big % 7);
}

TRACED long dw_float(double ratio, unsigned n) {
  TARGET_BARRIER();
  return (long)(ratio * n);
}

int main(int argc, char** argv) {
  long rounds = target_count_arg(argc, argv, 0, 1);
  for (long r = 0; r < rounds; r++) {
    printf("%ld\n", dw_mixed(3, "x", -2, 200, (void*)0x1234, -5000000000LL));
    printf("%ld\n", dw_float(2.5, 4));
    printf("%d\n", dw_nodebug(7));
  }
  return target_exit_code(argc, argv);
}
