/* target_lib: calls shared_fn() of libtarget_shared.so exactly N times.
 *
 *   target_lib [N] [--exit=CODE] [--tag=X]        (N defaults to 50)
 *
 * Prints "pid=P" and "shared_fn=N" (the library's own count). */
#include <unistd.h>

#include "target_common.h"
#include "target_shared.h"

int main(int argc, char** argv) {
  target_line_buffered();
  long n = target_count_arg(argc, argv, 0, 50);
  printf("pid=%d\n", (int)getpid());
  long acc = 0;
  for (long i = 0; i < n; ++i) {
    acc += shared_fn((int)i);
    TARGET_BARRIER();
  }
  printf("shared_fn=%ld\nchecksum=%ld\n", calls_of_shared_fn(), acc);
  return target_exit_code(argc, argv);
}
