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
  ThreadTable() = default;
  // An event of a thread. True when the thread is new to the table.
  bool saw(const formats::Event& ev);
  // An event that names the thread: its exit record (the final name), a
  // rename, or its creation. Records reach us in ring order, not time
  // order (one ring per CPU): the name with the latest timestamp wins.
  // True when the thread is new to the table.
  bool named(const formats::Event& ev, const std::string& name);
  // Re-reads the names of live threads (they may have been renamed).
  void refresh_names();
  std::vector<formats::ThreadInfo> table() const;

 private:
  formats::ThreadInfo& get(const formats::Event& ev, bool& fresh);
  std::map<uint32_t, uint64_t> named_at_;  // tid -> time of its current name
  std::map<uint32_t, formats::ThreadInfo> threads_;
};

}  // namespace atrace
