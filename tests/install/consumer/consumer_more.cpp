// The same probe from a C++ unit: one semaphore for both (the linker merges
// the weak definitions).
#include <atrace/probe.h>

#include <string>

extern "C" void more(int n) {
  std::string s(static_cast<size_t>(n), 'x');
  ATRACE_EVENT(consumer, step, n, s.c_str());
}
