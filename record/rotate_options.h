// `record --rotate=SIZE|DURATION`: what the recorder is asked (rotation.h
// does it; docs/recording-long.md).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace atrace {

struct RotateOptions {
  uint64_t bytes = 0;  // a file is cut once it holds this much; 0: not by size
  uint64_t ns = 0;     // ...or once it spans this long; 0: not by time
  // A file of the series is complete (its footer written, under its name):
  // called on the writing thread, so it must not block (--load queues it).
  std::function<void(const std::string& path)> file_done;
  bool enabled() const { return bytes || ns; }
};

}  // namespace atrace
