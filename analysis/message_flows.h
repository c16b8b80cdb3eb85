// The arrows of a trace's matched messages (message_match.h) for the
// exporters that stream (Chrome JSON, Perfetto, Paje): one pass over the
// trace's Message events before the exporter's own pass, then, in that
// pass, each Message event in turn asks which arrows it starts (a send,
// one per receive that got its bytes) and which one it ends (a receive).
// Arrow ids are 1, 2, ...: one per matched receive.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "analysis/message_match.h"

namespace atrace::formats {
class TraceReader;
}

namespace atrace::analysis {

class MessageFlows {
 public:
  MessageFlows() = default;
  // Reads the Message events the reader gives (those select() keeps),
  // pairs them, and rewinds the reader. A single recording without the
  // net group (no "net" in its kernel events) is not read: no arrows.
  explicit MessageFlows(formats::TraceReader& reader);

  size_t arrows() const { return in_count_; }
  bool empty() const { return in_count_ == 0; }

  // The next Message event's arrows, in the order the reader gives the
  // events (the same in both passes): the ids it starts, and the id it
  // ends (0: none).
  struct Arrows {
    std::vector<uint64_t> starts;
    uint64_t ends = 0;
  };
  const Arrows& next();

 private:
  std::vector<size_t> start_offset_;  // per message, into start_ids_ (size + 1)
  std::vector<uint64_t> start_ids_;
  std::vector<uint64_t> end_id_;  // per message
  size_t in_count_ = 0;
  size_t next_ = 0;
  Arrows current_;
};

}  // namespace atrace::analysis
