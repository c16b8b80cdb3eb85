#include <atrace/probe.h>
#include <stdio.h>

void more(int n);

int main(int argc, char** argv) {
  (void)argv;
  ATRACE_BEGIN(consumer, run);
  for (int i = 0; i < 3; i++) ATRACE_EVENT(consumer, step, i, "step");
  more(argc);
  ATRACE_END(consumer, run);
  printf("traced=%d\n", ATRACE_ENABLED(consumer, step) ? 1 : 0);
  return 0;
}
