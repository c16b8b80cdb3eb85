/* Built without debug information (-g0): record --args=dw_nodebug@auto has
 * nothing to name its parameters from. */
#include "target_common.h"

TRACED int dw_nodebug(int x) {
  TARGET_BARRIER();
  return x * 2;
}
