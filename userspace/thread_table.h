// The threads of a recording: first seen, last seen, event count and name.
// Names are read from /proc while a thread lives and taken from its
// thread-exit record when it dies, so short-lived threads keep theirs.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "formats/trace_types.h"

namespace atrace {

class ThreadTable {
 public:
  explicit ThreadTable(pid_t pid) : pid_(pid) {}
  // A function event of a thread.
  void saw(const fmt::Event& ev);
  // The thread's exit record, with its final name.
  void exited(const fmt::Event& ev, const char* comm, size_t comm_len);
  // Re-reads the names of live threads (they may have been renamed).
  void refresh_names();
  std::vector<fmt::ThreadInfo> table() const;

 private:
  fmt::ThreadInfo& get(const fmt::Event& ev);
  pid_t pid_;
  std::map<uint32_t, fmt::ThreadInfo> threads_;
};

}  // namespace atrace
