#include "target_usdt_lib.h"

#include <atrace/probe.h>

long usdt_lib_work(long n) {
  long sum = 0;
  for (long k = 0; k < n; k++) {
    ATRACE_EVENT(libp, hit, k);
    sum += k;
  }
  return sum;
}
