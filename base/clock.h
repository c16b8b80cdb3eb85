// The clocks of the recording side, in ns: CLOCK_MONOTONIC is the clock of
// every record (bpf_ktime_get_ns) and of the trace's times.
#pragma once

#include <time.h>

#include <cstdint>

namespace atrace {

inline uint64_t now_ns(clockid_t clock = CLOCK_MONOTONIC) {
  struct timespec ts {};
  clock_gettime(clock, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace atrace
